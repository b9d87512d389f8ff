package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// Test-only schedulers on a crossbar, whose completion times are easy to work out by hand
// (crossbar rules: every transmitter points nowhere at t = 0, so each circuit on a transmitter
// that must re-point pays α_r first).
const (
	// parallelAlgo puts every pair in one partial-mode group: on a demand where every transmitter
	// has one receiver, completion is α_r + (largest pair)/b.
	parallelAlgo = "sweeptest-parallel"
	// serialAlgo gives every pair its own barrier round: completion is Σ over pairs of α_r + bytes/b.
	serialAlgo = "sweeptest-serial"
	// failAlgo fails on any demand whose [0][1] entry is failBytes.
	failAlgo  = "sweeptest-fail"
	failBytes = 777
	// slowAlgo is serialAlgo after a 20 ms sleep that ignores its context, like a scheduler that
	// never checks for cancellation.
	slowAlgo = "sweeptest-slow"
)

var (
	slowCalls atomic.Int64
	// slowStarted, when set, is called by slowAlgo on entry with the number of calls so far.
	slowStarted func(calls int64)
)

func init() {
	schedules.Register(parallelAlgo, "test: all pairs at once on a crossbar", schedules.SchedulerFunc(
		func(_ context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			return crossbarSchedule(parallelAlgo, d, o, schedules.Partial, false), nil
		}))
	schedules.Register(serialAlgo, "test: one pair per barrier round on a crossbar", schedules.SchedulerFunc(
		func(_ context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			return crossbarSchedule(serialAlgo, d, o, schedules.Barrier, true), nil
		}))
	schedules.Register(failAlgo, "test: fails on marked demands", schedules.SchedulerFunc(
		func(_ context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			if d.N() > 1 && d.Bytes[0][1] == failBytes {
				return nil, errors.New("marked demand")
			}
			return crossbarSchedule(failAlgo, d, o, schedules.Partial, false), nil
		}))
	schedules.Register(slowAlgo, "test: slow and deaf to cancellation", schedules.SchedulerFunc(
		func(_ context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			n := slowCalls.Add(1)
			if slowStarted != nil {
				slowStarted(n)
			}
			time.Sleep(20 * time.Millisecond)
			return crossbarSchedule(slowAlgo, d, o, schedules.Barrier, true), nil
		}))
}

func crossbarSchedule(name string, d *schedules.Demand, o schedules.Options, mode schedules.Mode, roundEach bool) *schedules.Schedule {
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: name, N: d.N(), Ports: d.N(),
		Fabric: schedules.Crossbar, Mode: mode,
		Params: schedules.Params{BandwidthBytesPerSecond: o.Bandwidth, ReconfigSeconds: o.Reconfig},
	}
	for k, p := range d.Pairs() {
		g := 0
		if roundEach {
			g = k
		}
		s.Circuits = append(s.Circuits, schedules.Circuit{Src: p.Src, Dst: p.Dst, Bytes: p.Bytes, Group: g})
	}
	return s
}

func demand(t testing.TB, rows [][]int64) *schedules.Demand {
	t.Helper()
	d, err := schedules.DemandFromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// handDemands: D1 has 0→1 1 GB and 1→0 0.5 GB, D2 has 0→1 2 GB, D3 is empty.
func handDemands(t testing.TB) []*schedules.Demand {
	return []*schedules.Demand{
		demand(t, [][]int64{{0, 1e9}, {5e8, 0}}),
		demand(t, [][]int64{{0, 2e9}, {0, 0}}),
		demand(t, [][]int64{{0, 0}, {0, 0}}),
	}
}

func handConfig() Config {
	return Config{
		Algorithms: []string{serialAlgo, parallelAlgo},
		Reference:  parallelAlgo,
		Bandwidths: []float64{1e9, 2e9}, // 8 and 16 Gbps
		Reconfigs:  []float64{0, 1},
	}
}

// TestRunHandWorked checks the sums and ratios of a 2×2 grid against hand-worked completions.
//
// With b in GB/s and α in seconds:
// parallel: D1 = α + 1/b (0→1 is the longer of two concurrent circuits), D2 = α + 2/b, D3 = 0.
// serial:   D1 = (α + 1/b) + (α + 0.5/b), D2 = α + 2/b, D3 = 0.
// Lower bounds (every endpoint has one partner, reached after one switch change): D1 = α + 1/b,
// D2 = α + 2/b, D3 = 0. The parallel executor meets them.
func TestRunHandWorked(t *testing.T) {
	res, err := Run(context.Background(), handDemands(t), handConfig())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		bw, rc           int
		parallel, serial [3]float64
		lb               float64
	}{
		{0, 0, [3]float64{1, 2, 0}, [3]float64{1.5, 2, 0}, 3},
		{0, 1, [3]float64{2, 3, 0}, [3]float64{3.5, 3, 0}, 5},
		{1, 0, [3]float64{0.5, 1, 0}, [3]float64{0.75, 1, 0}, 1.5},
		{1, 1, [3]float64{1.5, 2, 0}, [3]float64{2.75, 2, 0}, 3.5},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	for _, tc := range tests {
		c := res.Cells[tc.bw][tc.rc]
		name := fmt.Sprintf("b=%g α=%g", c.Bandwidth, c.Reconfig)
		ser, par := c.Algorithms[0], c.Algorithms[1]
		if ser.Algorithm != serialAlgo || par.Algorithm != parallelAlgo {
			t.Fatalf("%s: algorithms in order %s, %s", name, ser.Algorithm, par.Algorithm)
		}
		var sumP, sumS float64
		for m := range 3 {
			if !near(par.Completions[m], tc.parallel[m]) || !near(ser.Completions[m], tc.serial[m]) {
				t.Errorf("%s matrix %d: parallel %g serial %g, want %g and %g", name, m,
					par.Completions[m], ser.Completions[m], tc.parallel[m], tc.serial[m])
			}
			sumP += tc.parallel[m]
			sumS += tc.serial[m]
		}
		if !near(par.Completion, sumP) || !near(ser.Completion, sumS) {
			t.Errorf("%s: sums %g, %g, want %g, %g", name, par.Completion, ser.Completion, sumP, sumS)
		}
		if !near(ser.Ratio, sumS/sumP) || par.Ratio != 1 {
			t.Errorf("%s: ratios serial %g parallel %g, want %g and 1", name, ser.Ratio, par.Ratio, sumS/sumP)
		}
		if !near(c.LowerBound, tc.lb) {
			t.Errorf("%s: lower-bound sum %g, want %g", name, c.LowerBound, tc.lb)
		}
		// The empty matrix has no bound and is not a sample of the distribution.
		br := c.BoundRatios(1)
		if len(br) != 2 || !near(br[0], tc.parallel[0]/(c.Reconfig+1e9/c.Bandwidth)) || !near(br[1], tc.parallel[1]/(c.Reconfig+2e9/c.Bandwidth)) {
			t.Errorf("%s: parallel completion/lower bound = %v", name, br)
		}
	}
	if res.Matrices != 3 || res.Reference != parallelAlgo {
		t.Errorf("Matrices = %d, Reference = %q", res.Matrices, res.Reference)
	}
}

func TestRatioGrid(t *testing.T) {
	res, err := Run(context.Background(), handDemands(t), handConfig())
	if err != nil {
		t.Fatal(err)
	}
	g, err := res.RatioGrid(serialAlgo)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{3.5 / 3, 6.5 / 5}, {1.75 / 1.5, 4.75 / 3.5}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(g[i][j]-want[i][j]) > 1e-12 {
				t.Errorf("ratio[%d][%d] = %g, want %g", i, j, g[i][j], want[i][j])
			}
		}
	}
	if _, err := res.RatioGrid("bvn"); err == nil || !strings.Contains(err.Error(), `"bvn"`) {
		t.Errorf("RatioGrid of an algorithm not swept: err = %v", err)
	}
}

// TestWriteCSV: the hand-worked grid's CSV. State changes on the crossbar are transmitter
// re-pointings: D1 re-points transmitters 0 and 1 once each, D2 transmitter 0 once, D3 none, so
// every row has 3 in total and 2 on the most-changed "switch" (transmitter 0, over the pass;
// the most in any one matrix would be 1).
func TestWriteCSV(t *testing.T) {
	res, err := Run(context.Background(), handDemands(t), handConfig())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "handworked.csv")
	if goldenfile.Update() {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("CSV differs from %s:\n%s", path, buf.String())
	}
}

// skewed is a seeded demand with a few heavy receivers, as MoE dispatch traffic has.
func skewed(n int, seed uint64) *schedules.Demand {
	r := rand.New(rand.NewPCG(seed, 1))
	d := schedules.NewDemand(n)
	hot := r.IntN(n)
	for i := range n {
		for j := range n {
			if i == j || r.IntN(4) == 0 {
				continue
			}
			b := int64(1+r.IntN(64)) << 12
			if j == hot {
				b *= 4
			}
			d.Bytes[i][j] = b
		}
	}
	return d
}

func TestRunDeterministicAcrossJobs(t *testing.T) {
	var ds []*schedules.Demand
	for k := range 6 {
		ds = append(ds, skewed(8, uint64(k)))
	}
	cfg := Config{
		Algorithms: append(realAlgorithms(), parallelAlgo, serialAlgo),
		Bandwidths: []float64{12.5e9, 100e9},
		Reconfigs:  []float64{10e-9, 10e-6, 1e-3},
	}
	var results []*Result
	for _, jobs := range []int{1, 2, 5} {
		cfg.Jobs = jobs
		res, err := Run(context.Background(), ds, cfg)
		if err != nil {
			t.Fatalf("jobs %d: %v", jobs, err)
		}
		results = append(results, res)
	}
	for k := 1; k < len(results); k++ {
		if !reflect.DeepEqual(results[0], results[k]) {
			t.Errorf("result with jobs %d differs from jobs 1", []int{1, 2, 5}[k])
		}
	}
	// Each cell's ratios are its own sums divided, whatever the order the runs finished in.
	for _, row := range results[1].Cells {
		for _, c := range row {
			for _, a := range c.Algorithms {
				var sum float64
				for _, v := range a.Completions {
					sum += v
				}
				if a.Completion != sum || a.Ratio != sum/c.Algorithms[0].Completion {
					t.Errorf("%s at b=%g α=%g: sum %g ratio %g do not match its completions", a.Algorithm, c.Bandwidth, c.Reconfig, a.Completion, a.Ratio)
				}
			}
		}
	}
}

func TestRunProgress(t *testing.T) {
	var calls, last, total int
	cfg := handConfig()
	cfg.Jobs = 2
	cfg.Progress = func(done, tot int) {
		calls++
		if done != last+1 {
			t.Errorf("progress went from %d to %d", last, done)
		}
		last, total = done, tot
	}
	if _, err := Run(context.Background(), handDemands(t), cfg); err != nil {
		t.Fatal(err)
	}
	// 2 bandwidths × 2 delays × 3 matrices × 2 algorithms.
	if calls != 24 || last != 24 || total != 24 {
		t.Errorf("progress: %d calls, last %d of %d; want 24 of 24", calls, last, total)
	}
}

func TestRunCancel(t *testing.T) {
	var ds []*schedules.Demand
	for k := range 50 {
		ds = append(ds, skewed(4, uint64(k)))
	}
	cfg := Config{
		Algorithms: []string{slowAlgo},
		Reference:  slowAlgo,
		Bandwidths: []float64{1e9, 2e9},
		Reconfigs:  []float64{0, 1e-6},
		Jobs:       2,
	}
	// 200 runs of 20 ms on 2 workers would take 2 s. Cancelling during the first run lets each
	// worker finish the run it has started, and no more.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slowStarted = func(n int64) {
		if n == 1 {
			cancel()
		}
	}
	defer func() { slowStarted = nil }()
	slowCalls.Store(0)
	start := time.Now()
	_, err := Run(ctx, ds, cfg)
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := slowCalls.Load(); n > int64(cfg.Jobs) {
		t.Errorf("%d scheduler calls after cancelling during the first; want at most one per worker (%d)", n, cfg.Jobs)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Run took %v after cancellation", elapsed)
	}

	slowCalls.Store(0)
	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := Run(done, ds, cfg); !errors.Is(err, context.Canceled) || slowCalls.Load() != 0 {
		t.Errorf("already-cancelled context: err = %v after %d calls", err, slowCalls.Load())
	}
}

func TestRunErrors(t *testing.T) {
	marked := demand(t, [][]int64{{0, failBytes}, {1, 0}})
	tests := []struct {
		name    string
		demands func(testing.TB) []*schedules.Demand
		mutate  func(*Config)
		want    string
	}{
		{"no matrices", func(testing.TB) []*schedules.Demand { return nil }, func(*Config) {}, "no demand matrices"},
		{"no bandwidths", handDemands, func(c *Config) { c.Bandwidths = nil }, "0 bandwidths"},
		{"zero bandwidth", handDemands, func(c *Config) { c.Bandwidths = []float64{0} }, "bandwidth 0 bytes/s"},
		{"negative delay", handDemands, func(c *Config) { c.Reconfigs = []float64{-1e-6} }, "delay -1e-06 s"},
		{"NaN delay", handDemands, func(c *Config) { c.Reconfigs = []float64{math.NaN()} }, "delay NaN"},
		{"reference not swept", handDemands, func(c *Config) { c.Reference = "tetris" }, `reference "tetris"`},
		{"default reference is tetris", handDemands, func(c *Config) { c.Reference = "" }, `reference "tetris"`},
		{"unknown algorithm", handDemands, func(c *Config) { c.Algorithms = append(c.Algorithms, "nope") }, `"nope"`},
		{"duplicate algorithm", handDemands, func(c *Config) { c.Algorithms = append(c.Algorithms, serialAlgo) }, "listed twice"},
		{"scheduler fails", func(t testing.TB) []*schedules.Demand { return append(handDemands(t), marked) },
			func(c *Config) { c.Algorithms = append(c.Algorithms, failAlgo) }, "matrix 3, algorithm sweeptest-fail: scheduling: marked demand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := handConfig()
			tc.mutate(&cfg)
			res, err := Run(context.Background(), tc.demands(t), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || res != nil {
				t.Errorf("err = %v, result %v; want an error mentioning %q and no result", err, res, tc.want)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	r := &Result{
		Bandwidths: []float64{12.5e9, 25e9, 50e9, 100e9},
		Reconfigs:  []float64{0, 10e-9, 1e-6, 10e-6, 1e-3},
	}
	tests := []struct {
		bw, rc       float64
		wantR, wantC int
		why          string
	}{
		{100e9, 10e-6, 3, 3, "exact cell"},
		{200e9, 10e-6, 3, 3, "beyond the last row"},
		{35e9, 30e-6, 1, 3, "35 is nearer 25 than 50 on a log scale (log 1.4 < log 1.43)"},
		{1e9, 0, 0, 0, "zero delay matches the zero column"},
		{1e9, 1e-9, 0, 1, "1 ns is nearer 10 ns than the 1 ps a zero delay stands for"},
		{1e9, 50e-6, 0, 3, "50 µs is nearer 10 µs (×5) than 1 ms (×20)"},
		{1e9, 300e-6, 0, 4, "300 µs is nearer 1 ms (×3.3) than 10 µs (×30)"},
	}
	for _, tc := range tests {
		r0, c0 := r.Nearest(tc.bw, tc.rc)
		if r0 != tc.wantR || c0 != tc.wantC {
			t.Errorf("Nearest(%g, %g) = (%d, %d), want (%d, %d): %s", tc.bw, tc.rc, r0, c0, tc.wantR, tc.wantC, tc.why)
		}
	}
}

// fixedCost is a transfer model where every circuit takes 1 s plus 1 ns per byte, whatever the
// bandwidth: a stand-in for measured times.
type fixedCost struct{}

func (fixedCost) Name() string { return "1s + 1ns/B" }
func (fixedCost) Seconds(_, _ int, bytes int64) (float64, error) {
	return 1 + float64(bytes)*1e-9, nil
}

// MinSeconds: α = 1 s ≥ 0, so k pieces cost k + 1e-9·bytes ≥ the whole demand's time.
func (f fixedCost) MinSeconds(src, dst int, bytes int64) (float64, error) {
	return f.Seconds(src, dst, bytes)
}

// TestRunTransferModel checks that a given transfer model replaces bytes/b in every cell, and the
// lower bounds with it: a bound at the cell's bandwidth would not hold for the times the cell runs
// at. Hand-worked with α = 0 and 1 (transfer times: D1 2 s and 1.5 s, D2 3 s): parallel =
// (α+2) + (α+3), serial = (α+2)+(α+1.5) + (α+3), same at both bandwidths; the bounds, one partner
// per endpoint, (2+α) + (3+α), which the parallel executor meets.
func TestRunTransferModel(t *testing.T) {
	cfg := handConfig()
	cfg.Transfer = fixedCost{}
	res, err := Run(context.Background(), handDemands(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range res.Cells {
		for j, c := range row {
			a := c.Reconfig
			ser, par := c.Algorithms[0].Completion, c.Algorithms[1].Completion
			if math.Abs(par-(2*a+5)) > 1e-12 || math.Abs(ser-(3*a+6.5)) > 1e-12 {
				t.Errorf("cell (%d, %d): parallel %g serial %g, want %g and %g", i, j, par, ser, 2*a+5, 3*a+6.5)
			}
			if want := 5 + 2*a; math.Abs(c.LowerBound-want) > 1e-12 {
				t.Errorf("cell (%d, %d): lower bound %g, want %g from the transfer model", i, j, c.LowerBound, want)
			}
		}
	}
}

// With a controller model, every cell executes with T_r = 0.25 s and T_w = 0.5 s whatever its α_r
// (which then only feeds planning), and the lower bounds use T_r + T_w: one command per partner
// of each endpoint, so D1's bound is 1/b + c and D2's 2/b + c. Parallel, D1: both
// transmitters re-point in one command (0.75 s), then 0→1 sends 1 GB: 0.75 + 1/b. D2: 0.75 + 2/b.
// Serial, D1: two rounds, each one command: 2·0.75 + 1.5/b. D2: 0.75 + 2/b.
func TestRunReconfigModel(t *testing.T) {
	cfg := handConfig()
	tr, tw := 0.25, 0.5
	cfg.ReconfigModel = emulator.ControllerReconfig(tr, tw)
	res, err := Run(context.Background(), handDemands(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := tr + tw
	for i, row := range res.Cells {
		for j, cell := range row {
			g := cell.Bandwidth / 1e9 // GB/s
			ser, par := cell.Algorithms[0].Completion, cell.Algorithms[1].Completion
			wantP, wantS := (c+1/g)+(c+2/g), (2*c+1.5/g)+(c+2/g)
			if math.Abs(par-wantP) > 1e-12 || math.Abs(ser-wantS) > 1e-12 {
				t.Errorf("cell (%d, %d): parallel %g serial %g, want %g and %g", i, j, par, ser, wantP, wantS)
			}
			if want := 3/g + 2*c; math.Abs(cell.LowerBound-want) > 1e-12 {
				t.Errorf("cell (%d, %d): lower bound %g, want %g (one partner per endpoint: one command each)", i, j, cell.LowerBound, want)
			}
		}
	}
}

// Plan's options reach the schedulers: Tetris with --no-partial runs in barrier rounds.
func TestRunPlanOptions(t *testing.T) {
	ds := []*schedules.Demand{skewed(8, 1), skewed(8, 2)}
	cfg := Config{Algorithms: []string{"tetris"}, Reference: "tetris", Bandwidths: []float64{1e11}, Reconfigs: []float64{1e-5}, Jobs: 1}
	partial, err := Run(context.Background(), ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plan.NoPartial = true
	barrier, err := Run(context.Background(), ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, b := partial.Cells[0][0].Algorithms[0].Completion, barrier.Cells[0][0].Algorithms[0].Completion
	if !(b > p) {
		t.Errorf("no-partial completion %g, partial %g: want the barrier ablation slower", b, p)
	}
}

// WriteFiles writes the CSV, a heatmap per baseline in both formats and the distribution, and
// the manifest last; NewManifest records the ablations and a non-Beneš fabric.
func TestWriteFilesAndManifest(t *testing.T) {
	cfg := handConfig()
	res, err := Run(context.Background(), handDemands(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fabric, cfg.Plan.NoPartial = schedules.Crossbar, true
	m := NewManifest(res, cfg, "tool", nil)
	if m.Fabric != "crossbar" || !reflect.DeepEqual(m.Ablations, []string{"no-partial"}) || m.Reference != parallelAlgo {
		t.Errorf("manifest %+v", m)
	}
	dir := t.TempDir()
	files, err := res.WriteFiles(context.Background(), dir, m)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"sweep.csv", "speedup-" + serialAlgo + ".svg", "speedup-" + serialAlgo + ".png",
		"completion-vs-lower-bound.svg", "completion-vs-lower-bound.png", "sweep.json"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("wrote %v, want %v", names, want)
	}
	var buf bytes.Buffer
	if err := res.WriteSummary(&buf); err != nil || !strings.Contains(buf.String(), serialAlgo+" / "+parallelAlgo) {
		t.Errorf("summary (%v):\n%s", err, buf.String())
	}
}

// A rerun into the same directory with fewer algorithms removes the plots it no longer writes
// (but not files it does not own); a write cancelled before it starts leaves the manifest, marked
// incomplete and listing the files to come, and none of them.
func TestWriteFilesRerunAndCancel(t *testing.T) {
	dir := t.TempDir()
	both := handConfig()
	both.Algorithms = []string{serialAlgo, slowAlgo, parallelAlgo}
	res, err := Run(context.Background(), handDemands(t), both)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.WriteFiles(context.Background(), dir, NewManifest(res, both, "tool", nil)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "speedup-"+slowAlgo+".svg")
	if _, err := os.Stat(stale); err != nil {
		t.Fatal(err)
	}
	one := handConfig()
	res1, err := Run(context.Background(), handDemands(t), one)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res1.WriteFiles(context.Background(), dir, NewManifest(res1, one, "tool", nil)); err != nil {
		t.Fatal(err)
	}
	var names []string
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		names = append(names, e.Name())
	}
	want := []string{"completion-vs-lower-bound.png", "completion-vs-lower-bound.svg", "notes.txt",
		"speedup-" + serialAlgo + ".png", "speedup-" + serialAlgo + ".svg", "sweep.csv", "sweep.json"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("after the rerun the directory holds %v, want %v", names, want)
	}
	m := readManifest(t, dir)
	if !m.Complete || len(m.Files) != 5 {
		t.Errorf("manifest after a whole write: complete %v, files %v", m.Complete, m.Files)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cdir := t.TempDir()
	if _, err := res1.WriteFiles(ctx, cdir, NewManifest(res1, one, "tool", nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}
	es, _ = os.ReadDir(cdir)
	if len(es) != 1 || es[0].Name() != ManifestName {
		t.Errorf("a write cancelled before it began left %v, want only %s", es, ManifestName)
	}
	if m := readManifest(t, cdir); m.Complete || len(m.Files) != 5 {
		t.Errorf("manifest of a cancelled write: complete %v, files %v", m.Complete, m.Files)
	}
}

func readManifest(t *testing.T, dir string) Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// cancelAfter is a context whose Err turns to Canceled after n calls: a signal that arrives in
// the middle of WriteFiles, between two files.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// Interrupted between two files, WriteFiles leaves the files it wrote whole and the manifest,
// written first, saying the set is incomplete: never results without their manifest.
func TestWriteFilesInterruptedMidway(t *testing.T) {
	cfg := handConfig()
	res, err := Run(context.Background(), handDemands(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Err is asked before the clean-up and before each file: the third call stops it after
	// sweep.csv.
	_, err = res.WriteFiles(&cancelAfter{context.Background(), 2}, dir, NewManifest(res, cfg, "tool", nil))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteFiles = %v, want Canceled", err)
	}
	var names []string
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		names = append(names, e.Name())
	}
	if want := []string{"sweep.csv", ManifestName}; !reflect.DeepEqual(names, want) {
		t.Errorf("after the interruption: %v, want %v", names, want)
	}
	if m := readManifest(t, dir); m.Complete || len(m.Files) != 5 {
		t.Errorf("manifest: complete %v, files %v; want incomplete, listing all 5", m.Complete, m.Files)
	}
}

// Every baseline's heatmap is coloured on one scale, the whole sweep's: with serial (ratios up
// to 1.5) and bvn beside it, both SVGs' colour bars end at the largest ratio of either.
func TestWriteFilesSharedScale(t *testing.T) {
	cfg := handConfig()
	cfg.Algorithms = []string{serialAlgo, "bvn", parallelAlgo}
	res, err := Run(context.Background(), handDemands(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hi := 0.0
	for _, algo := range []string{serialAlgo, "bvn"} {
		g, err := res.RatioGrid(algo)
		if err != nil {
			t.Fatal(err)
		}
		for _, vs := range g {
			hi = max(hi, slices.Max(vs))
		}
	}
	dir := t.TempDir()
	if _, err := res.WriteFiles(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
	top := ">" + strconv.FormatFloat(hi, 'g', 3, 64) + "<"
	for _, algo := range []string{serialAlgo, "bvn"} {
		b, err := os.ReadFile(filepath.Join(dir, "speedup-"+algo+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), top) || !strings.Contains(string(b), "completion / "+parallelAlgo+" completion (×)") {
			t.Errorf("speedup-%s.svg: no colour bar ending at the sweep's largest ratio %s", algo, top)
		}
	}
}

// Tetris meets the bound on every matrix of the built-in trace at 100 Gbps and α_r = 100 ns,
// and the sums over 30 matrices then differ from the summed bounds in the last bit (the CSV
// read 0.9999999999999999): no completion-over-bound below 1 reaches the CSV or the samples.
func TestNoRatioBelowOneByRounding(t *testing.T) {
	tr, err := trace.Default()
	if err != nil {
		t.Fatal(err)
	}
	var ds []*schedules.Demand
	for _, m := range tr.Matrices {
		ds = append(ds, m.Demand())
	}
	res, err := Run(context.Background(), ds, Config{Algorithms: []string{"tetris"}, Reference: "tetris",
		Bandwidths: []float64{12.5e9}, Reconfigs: []float64{1e-7}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if v, err := strconv.ParseFloat(r[len(r)-1], 64); err != nil || v < 1 {
			t.Errorf("completion_over_lower_bound %q (%v) in %v", r[len(r)-1], err, r)
		}
	}
	for _, v := range res.Cells[0][0].BoundRatios(0) {
		if v < 1 {
			t.Errorf("per-matrix ratio %v below 1", v)
		}
	}
}
