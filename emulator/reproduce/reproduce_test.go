package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// reduced is a small setting that keeps the paper's structure: two bandwidths with 800 Gbps on
// top, α_r from 10 ns to 10 ms, fabric sizes 4, 8, 16.
func reduced() Setting {
	s := Default()
	s.Bandwidths = []float64{12.5e9, 100e9}
	s.Reconfigs = []float64{10e-9, 100e-6, 10e-3}
	s.AblationReconfigs = []float64{10e-6}
	s.Scale = Scale{GPUs: []int{4, 8, 16}, Model: "mixtral-8x22b", TokensPerGPU: 200, Layers: 1, Seed: 1}
	s.Jobs = 2
	return s
}

// builtin is every k-th matrix of the built-in trace (one per dataset, layer and phase mix).
func builtin(t *testing.T, k int) []experiment.Matrix {
	t.Helper()
	in, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Trace) != 30 || in.TraceName != trace.DefaultName || len(in.Files) != 1 {
		t.Fatalf("Builtin: %d matrices of %q, inputs %v", len(in.Trace), in.TraceName, in.Files)
	}
	var ms []experiment.Matrix
	for i, m := range in.Trace {
		if i%k == 0 {
			ms = append(ms, m)
		}
	}
	return ms
}

// calibration is an 8-GPU calibration with every ordered pair under the isolated pattern: pair
// (s, d) has α = alpha(s, d) and bandwidth b, with exact medians at three sizes.
func calibration(t *testing.T, b float64, alpha func(s, d int) float64) *model.Calibration {
	t.Helper()
	c := &model.Calibration{Version: model.FormatVersion, Inventory: model.Inventory{Host: "hand", Fake: true}}
	for i := range 8 {
		c.Inventory.GPUs = append(c.Inventory.GPUs, model.GPU{Index: i, Name: "hand"})
	}
	for s := range 8 {
		for d := range 8 {
			if s == d {
				continue
			}
			p := model.PairFit{Src: s, Dst: d, Alpha: alpha(s, d), Beta: 1 / b, Bandwidth: b, R2: 1}
			for _, m := range []int64{4 << 10, 64 << 10, 1 << 20} {
				p.Medians = append(p.Medians, model.Median{Bytes: m, Seconds: p.Alpha + float64(m)/b, Repetitions: 1})
			}
			c.Pairs = append(c.Pairs, p)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func value(t *testing.T, f *Figure, key string) float64 {
	t.Helper()
	v, ok := f.Value(key)
	if !ok {
		var keys []string
		for _, tb := range f.Tables {
			for _, r := range tb.Rows {
				keys = append(keys, r.Key)
			}
		}
		t.Fatalf("%s: no row %q (rows: %s)", f.ID, key, strings.Join(keys, " "))
	}
	return v
}

// TestAll runs every figure on reduced data and checks the tables' shape against a golden file
// (titles, keys, quantities and the paper's column: not our numbers) and the properties the
// paper's figures rest on.
func TestAll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every figure")
	}
	dir := t.TempDir()
	s := reduced()
	in := Inputs{Trace: builtin(t, 10), TraceName: "every 10th matrix of the built-in trace",
		Calibration: calibration(t, 100e9, func(s, d int) float64 { return 1e-6 * float64(1+(s+d)%3) }), CalibrationName: "hand",
		Tool: "test"}
	var seen []string
	figs, err := Run(context.Background(), []string{"all"}, s, in, dir, func(f *Figure) { seen = append(seen, f.ID) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != fmt.Sprint(Figures) {
		t.Errorf("figures reported %v, want %v", seen, Figures)
	}
	var shape strings.Builder
	byID := map[string]*Figure{}
	for _, f := range figs {
		byID[f.ID] = f
		fmt.Fprintf(&shape, "%s: %s\n", f.ID, f.Title)
		for _, tb := range f.Tables {
			fmt.Fprintf(&shape, "  %s\n", tb.Title)
			for _, r := range tb.Rows {
				fmt.Fprintf(&shape, "    %s | %s | %s\n", r.Key, r.Quantity, r.Paper)
				if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) || r.Ours == "" {
					t.Errorf("%s %s: ours %q, value %g", f.ID, r.Key, r.Ours, r.Value)
				}
			}
		}
		for _, p := range f.Files {
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Errorf("%s: file %s missing or empty: %v", f.ID, p, err)
			}
		}
	}
	goldenfile.Check(t, "testdata/shape.golden", []byte(shape.String()))

	// Figure 7: nothing beats the lower bound.
	f7 := byID["fig7"]
	for _, a := range append(s.Baselines, "tetris") {
		if v := value(t, f7, "lb/min/"+a); v < 1-1e-9 {
			t.Errorf("fig7: %s's smallest completion / lower bound is %g < 1", a, v)
		}
	}
	// Figure 8: BvN's disadvantage grows with α_r (matching-wide reconfigurations), at 800 Gbps.
	f8 := byID["fig8"]
	if lo, hi := value(t, f8, "ratio/bvn/800Gbps/10ns"), value(t, f8, "ratio/bvn/800Gbps/10ms"); !(hi >= lo) || hi < 2 {
		t.Errorf("fig8: BvN / Tetris %g at 10 ms, %g at 10 ns: want it to grow, past 2", hi, lo)
	}
	// Figure 9: BvN's disadvantage grows with the fabric.
	f9 := byID["fig9"]
	prev := 0.0
	for _, n := range s.Scale.GPUs {
		r := value(t, f9, fmt.Sprintf("ratio/%d", n))
		if r <= prev {
			t.Errorf("fig9: BvN / Tetris %g at %d GPUs, not above %g at the size before", r, n, prev)
		}
		prev = r
	}
	// Figure 13, by hand: α is 1, 2 or 3 µs by (s+d) mod 3 over 56 pairs; 1/β = 100 GB/s.
	f13 := byID["fig13"]
	if a := value(t, f13, "alpha"); math.Abs(a-2e-6) > 1e-15 {
		t.Errorf("fig13: median α %g, want 2 µs", a)
	}
	if b := value(t, f13, "bandwidth"); b != 100e9 {
		t.Errorf("fig13: median bandwidth %g, want 100 GB/s", b)
	}
	if m := value(t, f13, "m-star"); math.Abs(m-2e5) > 1e-6 {
		t.Errorf("fig13: median α/β %g, want 200 kB", m)
	}
	// Figure 6: tetris+ keeps the best of plans that include Tetris's.
	if v := value(t, byID["fig6"], "tetris+/10us"); v > 1+1e-9 {
		t.Errorf("fig6: tetris+ / Tetris %g > 1", v)
	}

	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != ManifestVersion || m.Tool != "test" || len(m.Figures) != len(Figures) || len(m.Figures[2].Tables) != len(f8.Tables) {
		t.Errorf("manifest: version %d, tool %q, %d figures", m.Version, m.Tool, len(m.Figures))
	}
}

// TestFig10MatchesFig8: a calibration with α = 0 and β = 1/b is the bandwidth model at b, and so
// is a measured table of bytes / b for every demand, so
// Figure 10's ratios (summed over all matrices) must be Figure 8's at that bandwidth.
func TestFig10MatchesFig8(t *testing.T) {
	s := reduced()
	s.Bandwidths = []float64{100e9}
	in := Inputs{Trace: builtin(t, 15), TraceName: "two matrices", Calibration: calibration(t, 100e9, func(int, int) float64 { return 0 }),
		CalibrationName: "α = 0"}
	f8, err := Fig8(context.Background(), s, in, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The same by a measured table: every demand's bytes / b (other sizes scale linearly).
	measured := &emulator.MeasuredTable{Version: emulator.MeasuredFormatVersion}
	for _, m := range in.Trace {
		for _, p := range m.Demand.Pairs() {
			if p.Src != p.Dst {
				measured.Measurements = append(measured.Measurements, emulator.Measurement{Src: p.Src, Dst: p.Dst, Bytes: p.Bytes, Seconds: float64(p.Bytes) / 100e9})
			}
		}
	}
	withTable := in
	withTable.Measured, withTable.MeasuredName = measured, "bytes / b"
	for _, in := range []Inputs{in, withTable} {
		f10, err := Fig10(context.Background(), s, in, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"bvn/10ns", "bvn/10ms", "bff/10ns", "sunflow/10ns", "maxweight/10ms"} {
			algo, rc, _ := strings.Cut(k, "/")
			a, b := value(t, f8, "ratio/"+algo+"/800Gbps/"+rc), value(t, f10, "ratio/"+k)
			if math.Abs(a-b) > 1e-9*a {
				t.Errorf("%s (%s): Figure 8 %g, Figure 10 %g", k, f10.Setting, a, b)
			}
		}
		if !strings.Contains(f10.Setting, "800Gbps") {
			t.Errorf("fig10 setting %q: want planning at the calibration's 800Gbps", f10.Setting)
		}
	}
}

// permutation is the 4-port demand 0→1→2→3→0 of 1 MB each: one matching, which every scheduler
// serves in one round, so every completion is the bound 1 MB / b + α_r.
func permutation(t *testing.T) []experiment.Matrix {
	t.Helper()
	d := schedules.NewDemand(4)
	for i := range 4 {
		d.Bytes[i][(i+1)%4] = 1_000_000
	}
	return []experiment.Matrix{{Demand: d, Ref: emulator.MatrixRef{Index: 0, Layer: -1, Label: "permutation"}}}
}

// TestPermutationByHand: on one permutation every scheduler and every ablation meets the bound
// (Figures 6, 7 and 10).
func TestPermutationByHand(t *testing.T) {
	s := reduced()
	in := Inputs{Trace: permutation(t), TraceName: "permutation"}
	f6, err := Fig6(context.Background(), s, in, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tetris/lb/10us", "no-partial/10us", "naive-routing/10us", "no-degree-coverage/10us", "tetris+/10us"} {
		if v := value(t, f6, k); math.Abs(v-1) > 1e-9 {
			t.Errorf("fig6 %s = %g, want 1", k, v)
		}
	}
	f7, err := Fig7(context.Background(), s, in, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Baselines {
		if v := value(t, f7, "speedup/"+a); math.Abs(v-1) > 1e-9 {
			t.Errorf("fig7 %s / Tetris = %g, want 1", a, v)
		}
		if v := value(t, f7, "lb/max/"+a); math.Abs(v-1) > 1e-9 {
			t.Errorf("fig7 %s / lower bound = %g, want 1", a, v)
		}
	}
	// Figure 10 on one workload: its row is the sum. With α = 0 and β = 1/b, the same one round.
	in.Calibration, in.CalibrationName = calibration(t, 100e9, func(int, int) float64 { return 0 }), "α = 0"
	f10, err := Fig10(context.Background(), s, in, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ratio/bvn/10ns", "ratio/bvn/10ms", "max/bff", "ratio/maxweight/10ms"} {
		if v := value(t, f10, k); math.Abs(v-1) > 1e-9 {
			t.Errorf("fig10 %s = %g, want 1", k, v)
		}
	}
}

// TestFig7BoundProperty: on random demands no scheduler's completion is below the lower bound.
func TestFig7BoundProperty(t *testing.T) {
	s := reduced()
	s.Jobs = 1
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.SampledFrom([]int{4, 8}).Draw(rt, "n")
		d := schedules.NewDemand(n)
		for i := range n {
			for j := range n {
				if i != j && rapid.Float64Range(0, 1).Draw(rt, "p") < 0.6 {
					d.Bytes[i][j] = rapid.Int64Range(1, 4_000_000).Draw(rt, "bytes")
				}
			}
		}
		s.Reconfig = rapid.SampledFrom([]float64{0, 10e-9, 10e-6, 1e-3}).Draw(rt, "reconfig")
		in := Inputs{Trace: []experiment.Matrix{{Demand: d, Ref: emulator.MatrixRef{Layer: -1}}}, TraceName: "random"}
		f, _, _, err := fig7(context.Background(), s, in)
		if err != nil {
			rt.Fatal(err)
		}
		for _, a := range append(s.Baselines, "tetris") {
			if v, ok := f.Value("lb/min/" + a); ok && v < 1-1e-9 {
				rt.Fatalf("%s: completion / lower bound %g < 1", a, v)
			}
		}
	})
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"fig8", "FIG7", "fig8"}, "[fig7 fig8]"},
		{[]string{"fig9", "all"}, fmt.Sprint(Figures)},
		{[]string{"fig11"}, `figure "fig11"`},
		{nil, "no figure"},
	} {
		got, err := Check(c.in)
		s := fmt.Sprint(got)
		if err != nil {
			s = err.Error()
		}
		if !strings.Contains(s, c.want) {
			t.Errorf("Check(%v) = %s, want %s", c.in, s, c.want)
		}
	}
}

func TestRunNeedsInputs(t *testing.T) {
	for _, c := range []struct {
		fig  string
		in   Inputs
		want string
	}{
		{"fig7", Inputs{}, "no demand matrices"},
		{"fig10", Inputs{Trace: permutation(t)}, "needs a calibration or a measured table"},
		{"fig13", Inputs{}, "needs a calibration"},
	} {
		_, err := Run(context.Background(), []string{c.fig}, reduced(), c.in, t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.fig, err, c.want)
		}
	}
	s := reduced()
	s.Reconfigs = []float64{1e-3, 10e-9}
	if _, err := Run(context.Background(), []string{"fig8"}, s, Inputs{Trace: permutation(t)}, t.TempDir(), nil); err == nil ||
		!strings.Contains(err.Error(), "increasing order") {
		t.Errorf("unsorted grid: %v", err)
	}
}

// TestWriteTextGolden: the printed form of a figure (Figure 6 on the permutation: every number
// hand-checkable, 1.000), as the command prints it.
func TestWriteTextGolden(t *testing.T) {
	s := reduced()
	f, err := Fig6(context.Background(), s, Inputs{Trace: permutation(t), TraceName: "permutation"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := f.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/fig6-permutation.golden", []byte(b.String()))
}

// With PDF set, every chart Figure 7 draws has a PDF twin beside its SVG and PNG, and the
// figure lists it among its files.
func TestPDFTwins(t *testing.T) {
	s := reduced()
	s.PDF = true
	dir := t.TempDir()
	f7, err := Fig7(context.Background(), s, Inputs{Trace: permutation(t), TraceName: "permutation"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	pdfs := 0
	for _, f := range f7.Files {
		if !strings.HasSuffix(f, ".pdf") {
			continue
		}
		pdfs++
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Errorf("%s is not a PDF", f)
		}
		for _, twin := range []string{".svg", ".png"} {
			if _, err := os.Stat(strings.TrimSuffix(f, ".pdf") + twin); err != nil {
				t.Errorf("%s has no %s twin: %v", f, twin, err)
			}
		}
	}
	if pdfs != 2 {
		t.Errorf("%d PDFs among %v, want 2 (completion by workload, completion vs lower bound)", pdfs, f7.Files)
	}
}
