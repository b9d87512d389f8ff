package tetris

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// BenchmarkTetris plans one seeded skewed MoE-like demand per size at 800 Gbps and α_r = 10 µs.
// The names are fixed so figures compare across commits; -bench 'Tetris/n=(8|64)$' picks sizes.
// Besides wall time it reports cpu-ns/op, the process's CPU time per plan, which other work on a
// shared machine disturbs less (run with -cpu 1).
func BenchmarkTetris(b *testing.B) {
	o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6}
	for _, n := range []int{8, 16, 32, 64, 128, 256, 512} {
		d := moetest.Demand(1, n, 1.0, 0)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0, ok := processCPU()
			ops := 0
			for b.Loop() {
				if _, err := Schedule(context.Background(), d, o); err != nil {
					b.Fatal(err)
				}
				ops++
			}
			if cpu1, _ := processCPU(); ok && ops > 0 {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(ops), "cpu-ns/op")
			}
		})
	}
}
