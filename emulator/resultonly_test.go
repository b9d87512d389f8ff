package emulator

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// TestRunResultEqualsRun: on random schedules of every fabric and mode, with and without the
// demand, the result-only run and a run with PathsChecked give exactly Run's Result.
func TestRunResultEqualsRun(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "n")
		fabric := rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 7))
		s := randomSchedule(rng, n, rapid.IntRange(1, 4).Draw(t, "rounds"), fabric, mode, rapid.Float64Range(0.2, 1).Draw(t, "keep"))
		var d *schedules.Demand
		if rapid.Bool().Draw(t, "with demand") {
			d = schedules.NewDemand(n)
			for _, c := range s.Circuits {
				d.Bytes[c.Src][c.Dst] += c.Bytes
			}
		}
		cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(rapid.SampledFrom([]float64{0, 1e-8, 1e-6, 1e-3}).Draw(t, "α_r"))}
		want, tl, err := Run(context.Background(), s, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tl == nil {
			t.Fatal("Run returned no timeline")
		}
		got, err := RunResult(context.Background(), s, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("RunResult %+v\nRun       %+v", got, want)
		}
		cfg.PathsChecked = true
		trusted, tl2, err := Run(context.Background(), s, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(trusted, want) || !reflect.DeepEqual(tl2, tl) {
			t.Fatal("PathsChecked changed the run")
		}
	})
}

// TestPathsCheckedStillChecksShape: a schedule whose path is cut short is refused with or
// without PathsChecked (reading it would run off its end); a path that is merely wrong is
// refused only without.
func TestPathsCheckedStillChecksShape(t *testing.T) {
	s := randomSchedule(rand.New(rand.NewPCG(3, 4)), 8, 1, schedules.Benes, schedules.Partial, 1)
	short := *s
	short.Circuits = append([]schedules.Circuit(nil), s.Circuits...)
	short.Circuits[0].Path = benes.PathOf(short.Circuits[0].Path.Traversals()[:2])
	for _, checked := range []bool{false, true} {
		cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6), PathsChecked: checked}
		if _, err := RunResult(context.Background(), &short, nil, cfg); err == nil {
			t.Errorf("PathsChecked=%v: a 2-hop path on an 8-port Beneš was accepted", checked)
		}
	}
}
