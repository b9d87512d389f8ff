package schedules_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/barrier"
)

// denseBvNSinkhorn is the largest schedule a scheduler of this tree makes for a given n: the
// Birkhoff–von Neumann decomposition of a random dense demand's Sinkhorn scaling, up to
// n² − 2n + 2 barrier rounds of n circuits each (about 2·10^6 circuits at n = 128).
func denseBvNSinkhorn(tb testing.TB, n int) (*schedules.Schedule, *schedules.Demand) {
	tb.Helper()
	r := rand.New(rand.NewPCG(16, uint64(n)))
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if i != j {
				d.Bytes[i][j] = 1 + r.Int64N(1<<20)
			}
		}
	}
	s, err := barrier.BvNSinkhorn(context.Background(), d, schedules.Options{Bandwidth: 1e11, Reconfig: 1e-5})
	if err != nil {
		tb.Fatal(err)
	}
	return s, d
}

// BenchmarkVerify is Verify on the bvn-sinkhorn schedule of a random dense demand: the verifier
// every scheduled or loaded schedule goes through, at its largest.
func BenchmarkVerify(b *testing.B) {
	for _, n := range []int{64, 128} {
		s, d := denseBvNSinkhorn(b, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuSeconds()
			for b.Loop() {
				if vs := schedules.Verify(s, d); len(vs) != 0 {
					b.Fatal(schedules.ViolationsError(vs))
				}
			}
			// After the loop: its first call resets reported metrics. CPU time is the whole
			// process's (garbage collection on other cores included).
			if cpu := cpuSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(cpu*1e9/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(len(s.Circuits)), "circuits")
		})
	}
}
