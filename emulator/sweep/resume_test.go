package sweep

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/schedules"
)

var errStop = errors.New("stopped by the test")

// For random grids, a sweep stopped after a random number of chunks and resumed from its
// partial file (written and read back as the CLI does) gives exactly Run's result and CSV; the
// partial file always holds a prefix of the grid's units, each equal to the unsharded run's.
func TestInterruptedThenResumedEqualsRun(t *testing.T) {
	algos := []string{parallelAlgo, serialAlgo}
	if real := realAlgorithms(); len(real) > 0 {
		algos = append(algos, real[:min(2, len(real))]...)
	}
	inputs := []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "ab"}}
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		var ds []*schedules.Demand
		for k := range rapid.IntRange(1, 4).Draw(t, "matrices") {
			ds = append(ds, genDemand(t, string(rune('A'+k))))
		}
		bws := rapid.SliceOfNDistinct(rapid.SampledFrom([]float64{12.5e9, 50e9, 100e9}), 1, 2, rapid.ID).Draw(t, "bandwidths")
		rcs := rapid.SliceOfNDistinct(rapid.SampledFrom([]float64{0, 10e-9, 1e-6, 10e-3}), 1, 3, rapid.ID).Draw(t, "reconfigs")
		cfg := Config{Algorithms: algos, Reference: algos[0], Bandwidths: bws, Reconfigs: rcs, Jobs: rapid.IntRange(1, 2).Draw(t, "jobs")}
		if slices.Contains(algos, "tetris") && rapid.Bool().Draw(t, "wear axis") {
			cfg.WearWeights = []float64{0, 2}
		}
		want, err := Run(context.Background(), ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		part, err := NewPartial(ds, cfg, "tool", inputs)
		if err != nil {
			t.Fatal(err)
		}
		stopAfter := rapid.IntRange(0, 3).Draw(t, "chunks before the stop")
		saves := 0
		var kept *ShardFile
		save := func(sf *ShardFile) error {
			kept = roundTrip(t, filepath.Join(dir, "p"), sf)
			if saves++; saves > stopAfter {
				return errStop
			}
			return nil
		}
		got, err := RunCheckpointed(context.Background(), ds, cfg, part, save)
		if err == nil {
			// The grid was done in stopAfter chunks or fewer: nothing to resume.
			if !reflect.DeepEqual(got, want) {
				t.Fatal("an uninterrupted checkpointed run differs from Run")
			}
			return
		}
		if !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		for k, u := range kept.Results {
			c, m := k/len(ds), k%len(ds)
			cell := want.Cells[c/len(rcs)][c%len(rcs)]
			if u.LowerBound != cell.LowerBounds[m] || u.Completions[0] != cell.Algorithms[0].Completions[m] {
				t.Fatalf("kept unit %d differs from the uninterrupted run's", k)
			}
		}
		fresh, _ := NewPartial(ds, cfg, "tool", inputs)
		if err := CheckResume(kept, fresh); err != nil {
			t.Fatalf("CheckResume refuses its own partial file: %v", err)
		}
		got, err = RunCheckpointed(context.Background(), ds, cfg, kept, func(*ShardFile) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !bytes.Equal(csvOf(t, got), csvOf(t, want)) {
			t.Fatalf("resumed after %d of %d units: differs from the uninterrupted run", len(kept.Results), kept.Units)
		}
	})
}

// A partial file of another grid, other matrices, other inputs or other models is refused,
// naming what differs; one whose input only moved (same hash, another path) is accepted.
func TestCheckResumeRefusesAnotherSweep(t *testing.T) {
	ds := handDemands(t)
	cfg := Config{Algorithms: []string{parallelAlgo, serialAlgo}, Reference: parallelAlgo, Bandwidths: []float64{100e9}, Reconfigs: []float64{1e-6, 1e-3}, Jobs: 1}
	in := []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "ab"}}
	part, err := NewPartial(ds, cfg, "tool", in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunCheckpointed(context.Background(), ds, cfg, part, func(*ShardFile) error { return errStop }); !errors.Is(err, errStop) {
		t.Fatal(err)
	}
	other := cfg
	other.Reconfigs = []float64{1e-6, 1e-2}
	moreAlgos := cfg
	moreAlgos.Algorithms = []string{parallelAlgo}
	weighted := cfg
	weighted.Plan.WearWeight = 2
	for _, c := range []struct {
		name string
		ds   []*schedules.Demand
		cfg  Config
		in   []provenance.Input
		want string // "" for accepted
	}{
		{"same", ds, cfg, in, ""},
		{"input moved", ds, cfg, []provenance.Input{{Role: "demand", Path: "elsewhere/t.json", SHA256: "ab"}}, ""},
		{"input changed", ds, cfg, []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "cd"}}, "inputs"},
		{"grid", ds, other, in, "reconfigs_seconds"},
		{"algorithms", ds, moreAlgos, in, "algorithms"},
		{"wear weight", ds, weighted, in, "wear_weights: [2] vs (none)"},
		{"matrices", ds[:1], cfg, in, "matrices"},
	} {
		fresh, err := NewPartial(c.ds, c.cfg, "tool", c.in)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckResume(part, fresh)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: CheckResume = %v, want %q", c.name, err, c.want)
		}
	}
}

// A partial file written before state changes were recorded resumes: the cells it had finished
// have no state changes (empty CSV columns), the cells computed now have them, and every other
// number is the uninterrupted run's.
func TestResumeOldPartial(t *testing.T) {
	ds := handDemands(t)
	cfg := Config{Algorithms: []string{parallelAlgo, serialAlgo}, Reference: parallelAlgo, Bandwidths: []float64{100e9}, Reconfigs: []float64{1e-6, 1e-3}, Jobs: 1}
	want, err := Run(context.Background(), ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	part, err := NewPartial(ds, cfg, "tool", nil)
	if err != nil {
		t.Fatal(err)
	}
	// One chunk is one unit here (6 units, at most 50 chunks): stop once the first cell is done.
	save := func(sf *ShardFile) error {
		if len(sf.Results) == len(ds) {
			return errStop
		}
		return nil
	}
	if _, err := RunCheckpointed(context.Background(), ds, cfg, part, save); !errors.Is(err, errStop) {
		t.Fatal(err)
	}
	for i := range part.Results {
		part.Results[i].StateChanges, part.Results[i].StateChangesPerSwitch = nil, nil
	}
	old := roundTrip(t, filepath.Join(t.TempDir(), "p"), part)
	fresh, _ := NewPartial(ds, cfg, "tool", nil)
	if err := CheckResume(old, fresh); err != nil {
		t.Fatalf("an old partial file is refused: %v", err)
	}
	got, err := RunCheckpointed(context.Background(), ds, cfg, old, func(*ShardFile) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for j := range cfg.Reconfigs {
		for a, ar := range got.Cells[0][j].Algorithms {
			w := want.Cells[0][j].Algorithms[a]
			if ar.HasStateChanges != (j == 1) || ar.Completion != w.Completion || j == 1 && ar.StateChanges != w.StateChanges {
				t.Errorf("α_r %g %s: %+v, want state changes only in the cell computed after the resume (%+v)", cfg.Reconfigs[j], ar.Algorithm, ar, w)
			}
		}
	}
}
