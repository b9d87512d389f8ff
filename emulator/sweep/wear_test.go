package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func wearDemands() []*schedules.Demand {
	return []*schedules.Demand{skewed(8, 1), skewed(8, 2), skewed(8, 3)}
}

// TestWearAxis: with wear weights 0 and 4, every cell has tetris and bvn at weight 0 (the same
// numbers as a sweep without the axis) and tetris@w4 (the same as a sweep that plans Tetris at
// weight 4); each algorithm's state changes are those experiment.Outcome.Wear sums over the
// pass: the total, and the most-changed switch of the per-switch counts summed over matrices.
func TestWearAxis(t *testing.T) {
	ctx := context.Background()
	ds := wearDemands()
	cfg := Config{Algorithms: []string{"tetris", "bvn"}, Bandwidths: []float64{100e9}, Reconfigs: []float64{10e-9, 10e-6}, WearWeights: []float64{0, 4}}
	res, err := Run(ctx, ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tetris", "bvn", "tetris@w4"}; !slices.Equal(res.Algorithms, want) {
		t.Fatalf("algorithms %v, want %v", res.Algorithms, want)
	}
	plain := cfg
	plain.WearWeights = nil
	base, err := Run(ctx, ds, plain)
	if err != nil {
		t.Fatal(err)
	}
	heavy := cfg
	heavy.WearWeights, heavy.Algorithms, heavy.Plan.WearWeight = nil, []string{"tetris"}, 4
	w4, err := Run(ctx, ds, heavy)
	if err != nil {
		t.Fatal(err)
	}
	fewer := false
	for j := range cfg.Reconfigs {
		c := res.Cells[0][j]
		if !reflect.DeepEqual(c.Algorithms[:2], base.Cells[0][j].Algorithms) {
			t.Errorf("α_r %g: weight-0 columns differ from the sweep without the axis", c.Reconfig)
		}
		got, want := c.Algorithms[2], w4.Cells[0][j].Algorithms[0]
		if got.Completion != want.Completion || got.StateChanges != want.StateChanges || got.StateChangesMax != want.StateChangesMax {
			t.Errorf("α_r %g: tetris@w4 %+v, Tetris planned at weight 4 %+v", c.Reconfig, got, want)
		}
		if got.Ratio != got.Completion/c.Algorithms[0].Completion {
			t.Errorf("α_r %g: tetris@w4's ratio %g is not over tetris at weight 0", c.Reconfig, got.Ratio)
		}
		fewer = fewer || got.StateChanges < c.Algorithms[0].StateChanges
		// The pass's counts, as the wear report sums them.
		ms := make([]experiment.Matrix, len(ds))
		for m, d := range ds {
			ms[m] = experiment.Matrix{Ref: emulator.MatrixRef{Index: m, Layer: -1}, Demand: d}
		}
		out, err := experiment.Run(ctx, ms, cfg.cell(100e9, c.Reconfig), experiment.Pool{})
		if err != nil {
			t.Fatal(err)
		}
		for a, w := range out.Wear() {
			ar := c.Algorithms[a]
			if !ar.HasStateChanges || ar.StateChanges != w.Total || ar.StateChangesMax != w.Most.Count || w.Total == 0 {
				t.Errorf("α_r %g %s: state changes %d, most %d (known %v); the pass's wear: %d, most %d", c.Reconfig, ar.Algorithm,
					ar.StateChanges, ar.StateChangesMax, ar.HasStateChanges, w.Total, w.Most.Count)
			}
		}
	}
	if !fewer {
		t.Error("tetris@w4 changes switches no less than tetris in any cell: the axis did not reach the planner")
	}
	m := NewManifest(res, cfg, "tool", nil)
	if !slices.Equal(m.WearWeights, []float64{0, 4}) || !slices.Equal(m.Algorithms, res.Algorithms) {
		t.Errorf("manifest: wear weights %v, algorithms %v", m.WearWeights, m.Algorithms)
	}
	for _, bad := range []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.WearWeights = []float64{0, -1} }, "wear weight -1"},
		{func(c *Config) { c.WearWeights = []float64{1, 1} }, "listed twice"},
		{func(c *Config) { c.Algorithms, c.Reference = []string{"bvn"}, "bvn" }, "need an algorithm that weighs wear"},
	} {
		c := cfg
		bad.mutate(&c)
		if _, err := Run(ctx, ds, c); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want an error naming %q", c, err, bad.want)
		}
	}
}

// TestOldShardFilesMerge: shard files written before state changes were recorded (their
// results without state_changes and state_changes_per_switch) still merge: the cells they
// cover have empty state-change columns, every other column as the unsharded run's; the cells
// of new shards have their counts. A shard whose counts do not add up is refused.
func TestOldShardFilesMerge(t *testing.T) {
	ctx := context.Background()
	ds := wearDemands()[:2]
	cfg := Config{Algorithms: []string{"tetris", "bvn"}, Bandwidths: []float64{100e9}, Reconfigs: []float64{10e-9, 10e-6}}
	want, err := Run(ctx, ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	inputs := []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "ab"}}
	dir := t.TempDir()
	shards := func(strip ...bool) []*ShardFile {
		var out []*ShardFile
		for k, old := range strip {
			sf, err := RunShard(ctx, ds, cfg, Shard{k, len(strip)}, "tool", inputs)
			if err != nil {
				t.Fatal(err)
			}
			if old {
				for i := range sf.Results {
					sf.Results[i].StateChanges, sf.Results[i].StateChangesPerSwitch = nil, nil
				}
			}
			out = append(out, roundTrip(t, filepath.Join(dir, t.Name(), string(rune('a'+len(strip))), string(rune('a'+k))), sf))
		}
		return out
	}
	rows := func(r *Result) [][]string {
		recs, err := csv.NewReader(bytes.NewReader(csvOf(t, r))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	wantRows := rows(want)
	for _, strip := range [][]bool{{true}, {true, false}, {false, true}, {false, false}} {
		got, _, err := Merge(shards(strip...))
		if err != nil {
			t.Fatalf("%v: %v", strip, err)
		}
		// Units 0, 1 are α_r 10 ns; 2, 3 are 10 µs: two shards split at the cells.
		for i, row := range rows(got)[1:] {
			w := wantRows[i+1]
			cellOld := strip[min(len(strip)-1, i/2*len(strip)/2)]
			switch {
			case !slices.Equal(row[:10], w[:10]):
				t.Errorf("%v row %d: %v, want %v before the state changes", strip, i, row, w)
			case cellOld && (row[10] != "" || row[11] != ""):
				t.Errorf("%v row %d: state changes %q, %q from a file without them", strip, i, row[10], row[11])
			case !cellOld && (row[10] != w[10] || row[11] != w[11] || w[10] == ""):
				t.Errorf("%v row %d: state changes %q, %q, want %q, %q", strip, i, row[10], row[11], w[10], w[11])
			}
		}
	}
	sf, err := RunShard(ctx, ds, cfg, Shard{0, 1}, "tool", inputs)
	if err != nil {
		t.Fatal(err)
	}
	sf.Results[1].StateChanges[0]++
	path := filepath.Join(dir, "tampered.json")
	if err := safefile.WriteJSON(path, sf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadShard(path); err == nil || !strings.Contains(err.Error(), "results[1].state_changes[0]") {
		t.Errorf("a total that is not its switches' sum: %v", err)
	}
}
