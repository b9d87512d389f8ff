package emulator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// BenchmarkEmulator runs n random permutations on an n-port Beneš fabric in partial mode (n²
// circuits, each with its own random path, so switch epochs and RNB waits are plentiful) and
// reports events (circuit and reconfiguration completions) per second, derivation of the
// dependency order included.
func BenchmarkEmulator(b *testing.B) {
	for _, n := range []int{8, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := randomSchedule(rand.New(rand.NewPCG(1, uint64(n))), n, n, schedules.Benes, schedules.Partial, 1)
			cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6)}
			events := 0
			cpu0 := cpuSeconds()
			for b.Loop() {
				res, _, err := Run(context.Background(), s, nil, cfg)
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			reportRates(b, events, cpuSeconds()-cpu0)
		})
	}
}

// BenchmarkWalk is BenchmarkEmulator without deriving the order: the cost of one more timing
// model on a schedule already checked (what a sweep over execution models pays).
func BenchmarkWalk(b *testing.B) {
	for _, n := range []int{8, 128} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := randomSchedule(rand.New(rand.NewPCG(1, uint64(n))), n, n, schedules.Benes, schedules.Partial, 1)
			o, err := NewOrder(s)
			if err != nil {
				b.Fatal(err)
			}
			cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6)}
			events := 0
			cpu0 := cpuSeconds()
			for b.Loop() {
				res, _, err := RunOrder(context.Background(), o, s, nil, cfg)
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			reportRates(b, events, cpuSeconds()-cpu0)
		})
	}
}

// reportRates reports events per wall-clock second and, where the CPU time is known, per CPU
// second of the whole process (garbage collection on other cores included).
func reportRates(b *testing.B, events int, cpu float64) {
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(events)/cpu, "events/cpu-s")
	}
}
