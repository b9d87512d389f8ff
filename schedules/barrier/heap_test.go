package barrier

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// BenchmarkSinkhornHeapLive measures what a BvN-Sinkhorn schedule of a random dense 128×128
// demand keeps alive on the heap (the circuits, their paths and planned times): the figure that
// decides whether emulate at 256 ports fits in memory. Run it with -benchtime 1x; live-B/circuit
// is the heap in use after a collection, less the heap in use before planning, per circuit.
func BenchmarkSinkhornHeapLive(b *testing.B) {
	const n = 128
	rng := rand.New(rand.NewPCG(16, 128))
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if i != j {
				d.Bytes[i][j] = 1 + rng.Int64N(1<<24)
			}
		}
	}
	o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := BvNSinkhorn(context.Background(), d, o)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		live := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		b.ReportMetric(float64(len(s.Circuits)), "circuits")
		b.ReportMetric(live/(1<<20), "live-MiB")
		b.ReportMetric(live/float64(len(s.Circuits)), "live-B/circuit")
		runtime.KeepAlive(s)
	}
}
