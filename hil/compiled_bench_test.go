package hil

import (
	"context"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// BenchmarkCompiledFakeNVLink is the compiled replay's target setting on the fake device: 8
// endpoints, an 8×8 demand of 4 MiB entries, copies of α = 5 µs + bytes / 370 GB/s, α_r = 10 µs
// injected. Each iteration replays the schedule in real time; reported are, over iterations, the
// median and worst of live / predicted and of the harness's p99 cost per circuit. The targets
// are live/pred ≤ 1.05 and a p99 ≤ 5 µs (on a machine not loaded beyond its cores).
func BenchmarkCompiledFakeNVLink(b *testing.B) {
	gpuOf := identity(8)
	benchCompiledNVLink(b, FakeDevice(nvlink, gpuOf, false, 0), gpuOf)
}

// BenchmarkProcessDeviceNVLink is the same setting with the programs in worker processes, two
// endpoints to a GPU (ProcessDevice, flags and stamps in shared memory).
func BenchmarkProcessDeviceNVLink(b *testing.B) {
	benchCompiledNVLink(b, startProcessDevice(b, fourGPUs), fourGPUs)
}

func benchCompiledNVLink(b *testing.B, dev Device, gpuOf []int) {
	d := schedules.NewDemand(8)
	for i := range 8 {
		for j := range 8 {
			if i != j {
				d.Bytes[i][j] = 4 << 20
			}
		}
	}
	tm, rc := FakeTransferModel(nvlink, gpuOf), emulator.ParallelReconfig(10e-6)
	for _, algo := range []string{"tetris", "bvn", "sunflow", "maxweight"} {
		b.Run(algo, func(b *testing.B) {
			sch, err := schedules.Lookup(algo)
			if err != nil {
				b.Fatal(err)
			}
			s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: 370e9, Reconfig: 10e-6, Fabric: schedules.Benes})
			if err != nil {
				b.Fatal(err)
			}
			pres, _, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: tm, Reconfig: rc})
			if err != nil {
				b.Fatal(err)
			}
			var ratios, p99s []float64
			for b.Loop() {
				live, err := ReplayCompiled(context.Background(), s, dev, rc)
				if err != nil {
					b.Fatal(err)
				}
				ratios = append(ratios, live.Timeline.Completion()/pres.Completion)
				p99s = append(p99s, HarnessCostOf(live.HarnessCost).P99)
			}
			// Over iterations: the typical run (median) and the worst, which on a shared machine
			// is the one the kernel descheduled.
			r, h := DiffOf(ratios), DiffOf(p99s)
			b.ReportMetric(r.Median, "live/pred")
			b.ReportMetric(r.Worst, "worst-live/pred")
			b.ReportMetric(h.Median*1e9, "harness-p99-ns")
			b.ReportMetric(h.Worst*1e9, "worst-harness-p99-ns")
		})
	}
}
