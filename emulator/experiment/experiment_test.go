package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// Test-only schedulers on a crossbar, with completions easy to work out by hand (a transmitter
// points nowhere at t = 0, so its first circuit pays α_r first).
const (
	// parallelAlgo puts every pair in one partial-mode group.
	parallelAlgo = "experimenttest-parallel"
	// serialAlgo gives every pair its own barrier round.
	serialAlgo = "experimenttest-serial"
	// failAlgo fails on any demand whose [0][1] entry is failBytes.
	failAlgo  = "experimenttest-fail"
	failBytes = 777
	// lossyAlgo drops the first pair: its schedules fail the verifier.
	lossyAlgo = "experimenttest-lossy"
)

func init() {
	reg := func(name string, mode schedules.Mode, roundEach, lossy bool) {
		schedules.Register(name, "test", schedules.SchedulerFunc(
			func(_ context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
				if name == failAlgo && d.Bytes[0][1] == failBytes {
					return nil, errors.New("marked demand")
				}
				s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: name, N: d.N(), Ports: d.N(),
					Fabric: schedules.Crossbar, Mode: mode,
					Params: schedules.Params{BandwidthBytesPerSecond: o.Bandwidth, ReconfigSeconds: o.Reconfig}}
				for k, p := range d.Pairs() {
					if lossy && k == 0 {
						continue
					}
					g := 0
					if roundEach {
						g = k
					}
					s.Circuits = append(s.Circuits, schedules.Circuit{Src: p.Src, Dst: p.Dst, Bytes: p.Bytes, Group: g})
				}
				return s, nil
			}))
	}
	reg(parallelAlgo, schedules.Partial, false, false)
	reg(serialAlgo, schedules.Barrier, true, false)
	reg(failAlgo, schedules.Partial, false, false)
	reg(lossyAlgo, schedules.Partial, false, true)
}

func fromRows(t testing.TB, rows [][]int64) *schedules.Demand {
	t.Helper()
	d, err := schedules.DemandFromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// skewed is an n-port demand with a hot receiver, drawn from seed.
func skewed(n int, seed uint64) *schedules.Demand {
	rng := rand.New(rand.NewPCG(seed, 11))
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			d.Bytes[i][j] = rng.Int64N(1 << 20)
			if j == 1 {
				d.Bytes[i][j] *= 4
			}
		}
	}
	return d
}

// handMatrices: D0 has 0→1 1 GB and 1→0 0.5 GB; D1 has 0→1 2 GB.
func handMatrices(t testing.TB) []Matrix {
	return []Matrix{
		{Ref: emulator.MatrixRef{Index: 0, Layer: -1, Label: "D0"}, Demand: fromRows(t, [][]int64{{0, 1e9}, {5e8, 0}})},
		{Ref: emulator.MatrixRef{Index: 1, Layer: -1, Label: "D1"}, Demand: fromRows(t, [][]int64{{0, 2e9}, {0, 0}})},
	}
}

func handConfig(alpha float64) Config {
	return Config{Algorithms: []string{serialAlgo, parallelAlgo}, Reference: parallelAlgo,
		Options: schedules.Options{Bandwidth: 1e9, Reconfig: alpha},
		Exec:    emulator.Config{Transfer: emulator.BandwidthModel(1e9), Reconfig: emulator.ParallelReconfig(alpha)}}
}

// At b = 1 GB/s and α_r = 1 s:
// parallel: D0 = α + 1 = 2 (0→1 is the longer of two concurrent circuits), D1 = α + 2 = 3;
// serial:   D0 = (α + 1) + (α + 0.5) = 3.5, D1 = α + 2 = 3.
// Bounds: bandwidth D0 = 1, D1 = 2; every endpoint has one partner, which costs it one α_r (all
// switches start in Bar), so the reconfiguration-aware bounds are D0 = 2, D1 = 3. Re-pointings: each of the three circuits is its transmitter's first (3 per
// algorithm); rounds: serial has 2 + 1, parallel 1 + 1.
func TestRunHandWorked(t *testing.T) {
	out, err := Run(context.Background(), handMatrices(t), handConfig(1), Pool{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		algo                        string
		matrix                      int
		completion, bw, lb, speedup float64
	}
	want := []row{
		{serialAlgo, 0, 3.5, 1, 2, 3.5 / 2}, {parallelAlgo, 0, 2, 1, 2, 1},
		{serialAlgo, 1, 3, 2, 3, 1}, {parallelAlgo, 1, 3, 2, 3, 1},
	}
	if len(out.Records) != len(want) {
		t.Fatalf("%d records, want %d", len(out.Records), len(want))
	}
	for i, w := range want {
		r := out.Records[i]
		if r.Algorithm != w.algo || r.Matrix.Index != w.matrix || r.CompletionSeconds != w.completion ||
			r.LowerBoundSeconds != w.lb || r.BandwidthBoundSeconds != w.bw || r.ReconfigBoundSeconds != w.lb ||
			r.Speedup != w.speedup || r.Result.RatioBandwidth != w.completion/w.bw {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
		if r.Schedule != nil || r.Timeline != nil {
			t.Errorf("record %d keeps its run without KeepRuns", i)
		}
	}
	wantTotals := []Total{
		{Algorithm: serialAlgo, Matrices: 2, CompletionSeconds: 6.5, LowerBoundSeconds: 5, BandwidthBoundSeconds: 3, ReconfigBoundSeconds: 5,
			Speedup: 6.5 / 5, Groups: 3, StateChanges: 3},
		{Algorithm: parallelAlgo, Matrices: 2, CompletionSeconds: 5, LowerBoundSeconds: 5, BandwidthBoundSeconds: 3, ReconfigBoundSeconds: 5,
			Speedup: 1, Groups: 2, StateChanges: 3},
	}
	if !reflect.DeepEqual(out.Totals, wantTotals) || out.Matrices() != 2 || out.Reference != parallelAlgo {
		t.Errorf("totals %+v\nwant   %+v", out.Totals, wantTotals)
	}
}

// Without the reference among the algorithms there are no speedups; the default reference is
// Tetris.
func TestRunReference(t *testing.T) {
	cfg := handConfig(0)
	cfg.Reference = ""
	out, err := Run(context.Background(), handMatrices(t), cfg, Pool{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if r.Speedup != 0 {
			t.Errorf("%s: speedup %g without the reference", r.Algorithm, r.Speedup)
		}
	}
	if out.Reference != DefaultReference {
		t.Errorf("reference %q, want %q", out.Reference, DefaultReference)
	}
}

// RunMany gives the same outcomes for any number of workers, and each Config's outcome is what
// Run gives for it alone.
func TestRunManyDeterministic(t *testing.T) {
	var ms []Matrix
	for k := range 6 {
		ms = append(ms, Matrix{Ref: emulator.MatrixRef{Index: k, Layer: -1}, Demand: skewed(8, uint64(k))})
	}
	var cfgs []Config
	for _, alpha := range []float64{1e-7, 1e-5} {
		for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
			cfgs = append(cfgs, Config{Algorithms: []string{"tetris", "bvn", "sunflow"},
				Options: schedules.Options{Bandwidth: 1e11, Reconfig: alpha, Fabric: fabric},
				Exec:    emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ControllerReconfig(alpha/10, alpha)}})
		}
	}
	one, err := RunMany(context.Background(), ms, cfgs, Pool{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	many, err := RunMany(context.Background(), ms, cfgs, Pool{Jobs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, many) {
		t.Fatal("1 worker and 3 workers disagree")
	}
	alone, err := Run(context.Background(), ms, cfgs[3], Pool{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(alone, one[3]) {
		t.Error("RunMany's fourth outcome is not Run's on the fourth config")
	}
}

func TestRunErrors(t *testing.T) {
	marked := Matrix{Ref: emulator.MatrixRef{Index: 7, Label: "marked"}, Demand: fromRows(t, [][]int64{{0, failBytes}, {1, 0}})}
	tests := []struct {
		name   string
		ms     func(testing.TB) []Matrix
		mutate func(*Config)
		want   string
		stage  string
	}{
		{"no matrices", func(testing.TB) []Matrix { return nil }, func(*Config) {}, "no demand matrices", ""},
		{"no algorithms", handMatrices, func(c *Config) { c.Algorithms = nil }, "names no algorithm", ""},
		{"no models", handMatrices, func(c *Config) { c.Exec.Reconfig = nil }, "transfer and a reconfiguration model", ""},
		{"unknown algorithm", handMatrices, func(c *Config) { c.Algorithms = append(c.Algorithms, "nope") }, `"nope"`, ""},
		{"scheduler fails", func(t testing.TB) []Matrix { return append(handMatrices(t), marked) },
			func(c *Config) { c.Algorithms = append(c.Algorithms, failAlgo) }, "experimenttest-fail on matrix 7 (marked): scheduling: marked demand", "scheduling"},
		{"invalid schedule", handMatrices, func(c *Config) { c.Algorithms = []string{lossyAlgo} }, "internal error: bytes:", "verifying"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := handConfig(1e-6)
			tc.mutate(&cfg)
			out, err := Run(context.Background(), tc.ms(t), cfg, Pool{Jobs: 2})
			if err == nil || !strings.Contains(err.Error(), tc.want) || out != nil {
				t.Fatalf("err = %v, outcome %v; want an error mentioning %q and no outcome", err, out, tc.want)
			}
			var te *TaskError
			if tc.stage != "" && (!errors.As(err, &te) || te.Stage != tc.stage) {
				t.Errorf("err = %#v, want a TaskError at stage %s", err, tc.stage)
			}
		})
	}
	// With verification off (sweeps) a lossy schedule still cannot reach a table: it finishes
	// before the demand's lower bound, and the emulator refuses that, naming what it dropped.
	cfg := handConfig(1e-6)
	cfg.Algorithms, cfg.SkipVerify = []string{lossyAlgo}, true
	if _, err := Run(context.Background(), handMatrices(t), cfg, Pool{}); err == nil || !strings.Contains(err.Error(), "does not deliver its demand (pair (0, 1): 0 of") {
		t.Errorf("SkipVerify: err = %v, want the undelivered pair named", err)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, handMatrices(t), handConfig(0), Pool{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRunSchedule(t *testing.T) {
	ms := handMatrices(t)
	cfg := handConfig(1)
	cfg.KeepRuns = true
	sch, _ := schedules.Lookup(lossyAlgo)
	lossy, err := sch.Schedule(context.Background(), ms[0].Demand, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	// Against its demand the lossy schedule is invalid, and not an internal error.
	_, err = RunSchedule(context.Background(), lossy, ms[0], cfg)
	var inv *Invalid
	if !errors.As(err, &inv) || inv.Internal || len(inv.Violations) == 0 {
		t.Fatalf("err = %v, want a non-internal Invalid", err)
	}
	// Without a demand it runs: 1→0 alone takes α + 0.5.
	out, err := RunSchedule(context.Background(), lossy, Matrix{Ref: emulator.MatrixRef{Index: -1, Layer: -1}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Records[0]
	if r.CompletionSeconds != 1.5 || r.LowerBoundSeconds != 0 || r.Timeline == nil || r.Schedule != lossy {
		t.Errorf("record %+v: want completion 1.5 s, no bound, the run kept", r)
	}
}

// WriteTimelines writes per run a schedule, a run record that reads back and passes the
// verifier, and a Chrome trace; a run that was not kept is an error, not an empty file.
func TestWriteTimelines(t *testing.T) {
	cfg := handConfig(1e-6)
	cfg.KeepRuns = true
	out, err := Run(context.Background(), handMatrices(t), cfg, Pool{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "runs")
	inputs := []provenance.Input{provenance.Builtin("demand", "hand")}
	if err := WriteTimelines(context.Background(), dir, out.Records, cfg.Exec, "tool", inputs); err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		base := filepath.Join(dir, r.Name())
		rec, err := emulator.LoadRunRecord(base + ".timeline.json")
		if err != nil {
			t.Fatal(err)
		}
		s, err := schedules.LoadSchedule(base + ".schedule.json")
		if err != nil {
			t.Fatal(err)
		}
		// The schedule file is streamed; its bytes are still MarshalIndent's.
		if got, err := os.ReadFile(base + ".schedule.json"); err != nil {
			t.Fatal(err)
		} else if want, err := json.MarshalIndent(r.Schedule, "", " "); err != nil || !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("%s.schedule.json: %d bytes, not MarshalIndent's %d (err %v)", r.Name(), len(got), len(want)+1, err)
		}
		if vs := schedules.VerifyTimeline(s, rec.Timeline); len(vs) > 0 || rec.Source != emulator.SourceEmulator ||
			rec.Tool != "tool" || !reflect.DeepEqual(rec.Inputs, inputs) || rec.Result.Completion != r.CompletionSeconds {
			t.Errorf("%s: record %+v, violations %v", r.Name(), rec, vs)
		}
		if _, err := os.Stat(base + ".trace.json"); err != nil {
			t.Error(err)
		}
		// The per-switch counts are the schedule's (SwitchChanges), summing to the result's.
		per, err := emulator.SwitchChanges(s, false)
		if err != nil {
			t.Fatal(err)
		}
		most, _ := emulator.MostChanged(per)
		if len(per) == 0 || !reflect.DeepEqual(rec.StateChangesPerSwitch, per) || rec.StateChangesMax != most.Count {
			t.Errorf("%s: per-switch counts %v (most %d), want %v (most %d)", r.Name(), rec.StateChangesPerSwitch, rec.StateChangesMax, per, most.Count)
		}
	}
	out.Records[0].Timeline = nil
	if err := WriteTimelines(context.Background(), dir, out.Records, cfg.Exec, "tool", nil); err == nil || !strings.Contains(err.Error(), "not kept") {
		t.Errorf("run not kept: %v", err)
	}
}

func TestWriteTable(t *testing.T) {
	out, err := Run(context.Background(), handMatrices(t), handConfig(1), Pool{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := out.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// Header, 4 runs, 2 totals; serial on D0: 3.5 s, 3.5 × the 1 s bounds, 1.75 × parallel's 2 s.
	// One unit per column, named in the heading; barrier runs count rounds, partial ones groups,
	// the count and its kind in columns of their own.
	f1, f2, f5 := strings.Fields(lines[1]), strings.Fields(lines[2]), strings.Fields(lines[5])
	if len(lines) != 7 || !strings.Contains(lines[0], "TETRIS_SPEEDUP") || !strings.Contains(lines[0], "COMPLETION(s)") ||
		len(f1) != 11 || f1[0] != "0" || f1[1] != "-" || f1[4] != "3.500" || f1[5] != "3.500" || f1[7] != "1.750" ||
		f1[8] != "2" || f1[9] != "rounds" || len(f2) != 11 || f2[8] != "1" || f2[9] != "groups" ||
		len(f5) != 11 || f5[0] != "total" || f5[1] != "2-matrices" {
		t.Errorf("table:\n%s", b.String())
	}
}

// A rerun into the same directory with fewer runs removes the files only the earlier run wrote,
// but never one of this run's inputs; a cancelled write leaves the manifest marked incomplete.
func TestWriteTimelinesRerunAndCancel(t *testing.T) {
	cfg := handConfig(1e-6)
	cfg.KeepRuns = true
	out, err := Run(context.Background(), handMatrices(t), cfg, Pool{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTimelines(context.Background(), dir, out.Records, cfg.Exec, "tool", nil); err != nil {
		t.Fatal(err)
	}
	m, err := ReadTimelinesManifest(dir)
	if err != nil || m == nil || !m.Complete || len(m.Files) != 3*len(out.Records) {
		t.Fatalf("manifest %+v (%v): want complete, 3 files per run", m, err)
	}
	// The rerun keeps only the first run and reads the last run's schedule as an input.
	input := filepath.Join(dir, out.Records[len(out.Records)-1].Name()+".schedule.json")
	inputs := []provenance.Input{{Role: "schedule", Path: input}}
	if err := WriteTimelines(context.Background(), dir, out.Records[:1], cfg.Exec, "tool", inputs); err != nil {
		t.Fatal(err)
	}
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	first, last := out.Records[0].Name(), out.Records[len(out.Records)-1].Name()
	want := []string{first + ".schedule.json", first + ".timeline.json", first + ".trace.json",
		last + ".schedule.json", TimelinesManifestName}
	sort.Strings(want)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("after the rerun: %v, want %v", names, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WriteTimelines(ctx, dir, out.Records, cfg.Exec, "tool", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if m, err := ReadTimelinesManifest(dir); err != nil || m.Complete || len(m.Files) != 3*len(out.Records) {
		t.Errorf("manifest of a cancelled write %+v (%v): want incomplete, listing every file", m, err)
	}
	if err := os.WriteFile(filepath.Join(dir, TimelinesManifestName), []byte(`{"version":7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteTimelines(context.Background(), dir, out.Records, cfg.Exec, "tool", nil); err == nil ||
		!strings.Contains(err.Error(), "field version: 7") {
		t.Errorf("a manifest of another version: %v", err)
	}
}
