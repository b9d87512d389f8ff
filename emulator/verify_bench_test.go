package emulator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/barrier"
)

// BenchmarkVerifyTimeline is schedules.VerifyTimeline on the emulated timeline of the largest
// schedule a scheduler of this tree makes for a given n: bvn-sinkhorn on a random dense demand
// (about 2·10^6 circuits in barrier rounds at n = 128). Every emulated timeline is verified.
func BenchmarkVerifyTimeline(b *testing.B) {
	for _, n := range []int{64, 128} {
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
			b.Fatal(err)
		}
		cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-5)}
		_, tl, err := Run(context.Background(), s, d, cfg)
		if err != nil {
			b.Fatal(err)
		}
		_, _, rt, err := runForCheck(context.Background(), s, d, cfg)
		if err != nil {
			b.Fatal(err)
		}
		// Per entry, and the same timeline stored by round, as RunChecked checks it.
		size := [2]int{len(s.Circuits), len(tl.SwitchChanges)}
		benchVerify(b, fmt.Sprintf("n=%d", n), size, func() []schedules.Violation { return schedules.VerifyTimeline(s, tl) })
		benchVerify(b, fmt.Sprintf("n=%d-by-round", n), size, func() []schedules.Violation { return schedules.VerifyRoundTimeline(s, rt) })
	}
}

// benchVerify times verify, which must find nothing, as sub-benchmark name; size is the
// timeline's circuits and switch changes.
func benchVerify(b *testing.B, name string, size [2]int, verify func() []schedules.Violation) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := cpuSeconds()
		for b.Loop() {
			if vs := verify(); len(vs) != 0 {
				b.Fatal(schedules.ViolationsError(vs))
			}
		}
		// After the loop: its first call resets reported metrics. CPU time is the whole
		// process's (garbage collection on other cores included).
		if cpu := cpuSeconds() - cpu0; cpu > 0 {
			b.ReportMetric(cpu*1e9/float64(b.N), "cpu-ns/op")
		}
		b.ReportMetric(float64(size[0]), "circuits")
		b.ReportMetric(float64(size[1]), "changes")
	})
}
