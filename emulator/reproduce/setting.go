package reproduce

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// Setting is what the figures run with. Default is the paper's (§4.1–§4.2); tests run reduced
// ones.
type Setting struct {
	// Bandwidth and Reconfig are the default configuration (§4.1: 800 Gbps per port, α_r =
	// 10 µs): Figures 7 and 9, in bytes per second and seconds.
	Bandwidth float64 `json:"bandwidth_bytes_per_second"`
	Reconfig  float64 `json:"reconfig_seconds"`
	// Bandwidths × Reconfigs is Figure 8's grid; Figure 10 sweeps Reconfigs.
	Bandwidths []float64 `json:"bandwidths_bytes_per_second"`
	Reconfigs  []float64 `json:"reconfigs_seconds"`
	// AblationReconfigs are the α_r at which Figure 6's ablations run (at Bandwidth).
	AblationReconfigs []float64 `json:"ablation_reconfigs_seconds"`
	// Baselines are the schedulers compared with Tetris in Figures 7, 8 and 10 (§4.1).
	Baselines []string `json:"baselines"`
	// Scale is Figure 9's synthetic setting.
	Scale Scale `json:"scale"`
	// Jobs is the number of workers (0: one per CPU).
	Jobs int `json:"-"`
	// PDF adds a PDF of every chart reproduce draws itself (Figures 7, 9, 10, 13; Figure 8's
	// heatmaps come from the sweep, in SVG and PNG): vector, fonts embedded as subsets, for papers.
	PDF bool `json:"-"`
	// Progress, when set, is called after every run (one algorithm on one matrix) with what is
	// running ("fig8", "fig9, 16 GPUs"), the runs done and the total. Calls never overlap.
	Progress func(what string, done, total int) `json:"-"`
}

// pool is the experiment pool of s for what.
func (s *Setting) pool(what string) experiment.Pool {
	return experiment.Pool{Jobs: s.Jobs, Progress: s.progress(what)}
}

func (s *Setting) progress(what string) func(done, total int) {
	if s.Progress == nil {
		return nil
	}
	return func(done, total int) { s.Progress(what, done, total) }
}

// Scale is Figure 9's synthetic demand: the generator's one-expert-per-GPU mode (every GPU
// sends to every other) for each fabric size in GPUs.
type Scale struct {
	GPUs         []int  `json:"gpus"`
	Model        string `json:"model"` // a synth preset: its hidden size sets message sizes
	TokensPerGPU int    `json:"tokens_per_gpu"`
	Layers       int    `json:"layers"` // each gives a dispatch and a combine matrix
	Seed         uint64 `json:"seed"`
}

// Default is the paper's setting: 800 Gbps and α_r = 10 µs by default (§4.1); Figure 8's grid
// of 100–800 Gbps × 10 ns–10 ms (§4.2); BvN, MaxWeight, BFF and Sunflow as baselines (§4.1);
// Figure 9 on Mixtral-8x22B's hidden size 6144 with about 600 tokens per GPU at 8, 16 and 32
// GPUs, four layers (eight matrices) per size.
func Default() Setting {
	return Setting{
		Bandwidth:         100e9,
		Reconfig:          10e-6,
		Bandwidths:        []float64{12.5e9, 25e9, 50e9, 100e9},
		Reconfigs:         []float64{10e-9, 100e-9, 1e-6, 10e-6, 100e-6, 1e-3, 10e-3},
		AblationReconfigs: []float64{100e-9, 10e-6, 1e-3},
		Baselines:         []string{"bvn", "maxweight", "bff", "sunflow"},
		Scale:             Scale{GPUs: []int{8, 16, 32}, Model: "mixtral-8x22b", TokensPerGPU: 600, Layers: 4, Seed: 1},
	}
}

func (s *Setting) check() error {
	if !(s.Bandwidth > 0) || math.IsInf(s.Bandwidth, 0) || !(s.Reconfig >= 0) || math.IsInf(s.Reconfig, 0) {
		return fmt.Errorf("reproduce: default configuration %g bytes/s, α_r %g s: want a positive bandwidth and a delay ≥ 0", s.Bandwidth, s.Reconfig)
	}
	if len(s.Bandwidths) == 0 || len(s.Reconfigs) == 0 || len(s.AblationReconfigs) == 0 {
		return fmt.Errorf("reproduce: %d grid bandwidths, %d grid delays, %d ablation delays: want at least one of each",
			len(s.Bandwidths), len(s.Reconfigs), len(s.AblationReconfigs))
	}
	for _, xs := range [][]float64{s.Bandwidths, s.Reconfigs, s.AblationReconfigs} {
		if !slices.IsSorted(xs) {
			return fmt.Errorf("reproduce: grid values %v: want them in increasing order", xs)
		}
	}
	if len(s.Baselines) == 0 {
		return fmt.Errorf("reproduce: no baseline scheduler")
	}
	if len(s.Scale.GPUs) == 0 || s.Scale.TokensPerGPU < 1 || s.Scale.Layers < 1 {
		return fmt.Errorf("reproduce: scaling setting %+v: want GPU counts, tokens per GPU ≥ 1 and layers ≥ 1", s.Scale)
	}
	return nil
}

// The formats of the tables' cells.

// matrices is "1 matrix", "30 matrices".
func matrices(n int) string {
	if n == 1 {
		return "1 matrix"
	}
	return strconv.Itoa(n) + " matrices"
}

func fmtRatio(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func fmtRatio3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func bw(b float64) string { return units.FormatBandwidth(b) }

func dur(s float64) string { return units.FormatSeconds(s) }

// keyDur is a delay as a table key: "10ns", "100us", "1ms".
func keyDur(s float64) string { return strings.ReplaceAll(units.FormatSeconds(s), "µ", "u") }

// keyBW is a bandwidth as a table key: "800Gbps".
func keyBW(b float64) string { return strings.ReplaceAll(units.FormatBandwidth(b), " ", "") }

// WriteText prints the figure's tables, setting and notes as aligned text.
func (f *Figure) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "== %s: %s\n", f.ID, f.Title)
	fmt.Fprintf(w, "setting: %s\n", f.Setting)
	for _, t := range f.Tables {
		fmt.Fprintf(w, "\n%s\n", t.Title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  QUANTITY\tPAPER\tOURS")
		for _, r := range t.Rows {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Quantity, r.Paper, r.Ours)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(f.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range f.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

func writeTables(path string, f *Figure) error {
	var b strings.Builder
	if err := f.WriteText(&b); err != nil {
		return err
	}
	return safefile.WriteFile(path, []byte(b.String()))
}

// writePlots writes base.svg and base.png into dir.
func (s *Setting) writePlots(dir, base string, draw func(io.Writer, string) error) ([]string, error) {
	formats := plot.Formats
	if s.PDF {
		formats = append(slices.Clone(formats), plot.PDF)
	}
	var files []string
	for _, format := range formats {
		var b bytes.Buffer
		if err := draw(&b, format); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", base, format, err)
		}
		p := filepath.Join(dir, base+"."+format)
		if err := safefile.WriteFile(p, b.Bytes()); err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// name is an algorithm as the paper writes it.
func name(algo string) string {
	switch algo {
	case "bvn":
		return "BvN"
	case "maxweight":
		return "MaxWeight"
	case "bff":
		return "BFF"
	case "sunflow":
		return "Sunflow"
	case "tetris":
		return "Tetris"
	}
	return algo
}

func joinDur(xs []float64) string {
	ss := make([]string, len(xs))
	for i, x := range xs {
		ss[i] = dur(x)
	}
	return strings.Join(ss, ", ")
}
