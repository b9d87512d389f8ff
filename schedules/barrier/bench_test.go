package barrier

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// benchScheduler times a scheduler on seeded skewed demands (skewedDemand) on the default Beneš
// fabric, and reports the rounds and circuits it made, since those drive both its running time and
// the schedule's reconfiguration cost.
func benchScheduler(b *testing.B, f schedules.SchedulerFunc) {
	for _, n := range []int{8, 16, 32, 64, 128} {
		d := moetest.Skewed(1, n)
		o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var s *schedules.Schedule
			for b.Loop() {
				var err error
				if s, err = f(context.Background(), d, o); err != nil {
					b.Fatal(err)
				}
			}
			rounds, _ := strconv.Atoi(s.Params.Options["rounds"])
			b.ReportMetric(float64(rounds), "rounds")
			b.ReportMetric(float64(len(s.Circuits)), "circuits")
		})
	}
}

func BenchmarkBvN(b *testing.B)         { benchScheduler(b, BvN) }
func BenchmarkBvNMaxMin(b *testing.B)   { benchScheduler(b, BvNMaxMin) }
func BenchmarkMaxWeight(b *testing.B)   { benchScheduler(b, MaxWeight) }
func BenchmarkSolstice(b *testing.B)    { benchScheduler(b, Solstice) }
func BenchmarkBvNSinkhorn(b *testing.B) { benchScheduler(b, BvNSinkhorn) }
