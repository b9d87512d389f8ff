// Package reproduce runs the settings of the Tetris paper's evaluation ("Tetris: Circuit
// Scheduling for Rearrangeably Non-Blocking Photonic Interconnects", §4.1–§4.2) one figure at a
// time, writes each figure's plot, and sets our numbers beside the ones the paper's text states:
//
//   - Figure 6: the Tetris ablations (no partial reconfiguration, naive routing, no degree
//     coverage) and tetris+, against Tetris on the real trace (§3, Figure 6 is an illustration:
//     the text states no numbers).
//   - Figure 7: every scheduler on every real matrix at 800 Gbps, α_r = 10 µs: (a) completion per
//     workload as bars, (b) the distribution of completion over the lower bound per matrix.
//   - Figure 8: the bandwidth × α_r grid (100–800 Gbps, 10 ns–10 ms), baseline over Tetris, as
//     one heatmap per baseline.
//   - Figure 9: Tetris and BvN on synthetic demand of 8, 16 and 32 GPUs (one expert per GPU,
//     600 tokens per GPU, hidden size 6144), completion against fabric size.
//   - Figure 10: the α_r sweep of Figure 8 with transfer times from a GPU calibration (per-pair
//     α + β·bytes) or a table of measured per-demand times, as the paper's hardware emulation.
//   - Figure 13: the α-β fit of the calibration itself.
//
// Everything runs through the experiment API (emulator/experiment, and emulator/sweep on top of
// it): the same plan × verify × run × compare loop as `tetris-hil emulate` and `sweep`, and every
// ratio to the lower bound is to schedules.LowerBound's, taken there. Run writes each figure's
// files under its own folder of the output directory with its tables as text (tables.txt), and a
// manifest (reproduce.json: the tool, the inputs with their SHA-256, the setting, every table)
// beside them, last. Fig6 … Fig13 run one figure each into a folder that exists.
package reproduce

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules/trace"

	// The schedulers the figures name register themselves: a Go program calling Run needs
	// nothing else imported.
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// Figures are the figures Run knows, in the order "all" runs them.
var Figures = []string{"fig6", "fig7", "fig8", "fig9", "fig10", "fig13"}

// Inputs are the data the figures run on.
type Inputs struct {
	// Trace is the real demand of Figures 6, 7, 8 and 10 (Builtin gives the built-in trace's;
	// TraceMatrices turns any trace into it); TraceName says what it is in the output.
	Trace     []experiment.Matrix
	TraceName string
	// Calibration gives Figure 10 its transfer times (unless Measured is set) and is what Figure
	// 13 draws; CalibrationName says where it came from (a path, or that it is fake).
	Calibration     *model.Calibration
	CalibrationName string
	// Measured, when set, times Figure 10's transfers instead of the calibration: per-demand
	// measured times, as the paper's hardware emulation (§4.1).
	Measured     *emulator.MeasuredTable
	MeasuredName string
	// Files are the input files (role, path, SHA-256) recorded in the manifest.
	Files []provenance.Input
	// Tool names the build, recorded in the manifest (provenance.Tool()).
	Tool string
}

// Figure is one figure's outcome.
type Figure struct {
	ID      string   `json:"id"`    // "fig8"
	Title   string   `json:"title"` // what the figure shows
	Setting string   `json:"setting"`
	Tables  []Table  `json:"tables"`
	Notes   []string `json:"notes,omitempty"`
	Files   []string `json:"files"`
}

// Table is one paper-vs-ours table.
type Table struct {
	// Title names the figure panel and the section its numbers are quoted from.
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
}

// Row is one quantity: what the paper's text states, and ours.
type Row struct {
	// Key is a stable name of the quantity for programs and tests, e.g. "bvn/800Gbps/10ms".
	Key      string `json:"key"`
	Quantity string `json:"quantity"`
	// Paper is the paper's number as its text states it, or "not stated".
	Paper string `json:"paper"`
	// Ours is our number as printed; Value is it as a number (NaN-free).
	Ours  string  `json:"ours"`
	Value float64 `json:"value"`
}

// NotStated is the Paper cell of a quantity the paper's text gives no number for.
const NotStated = "not stated"

// Row returns the row with key k.
func (t *Table) Row(k string) (Row, bool) {
	i := slices.IndexFunc(t.Rows, func(r Row) bool { return r.Key == k })
	if i < 0 {
		return Row{}, false
	}
	return t.Rows[i], true
}

// Value is the value of row k in any of the figure's tables.
func (f *Figure) Value(k string) (float64, bool) {
	for i := range f.Tables {
		if r, ok := f.Tables[i].Row(k); ok {
			return r.Value, true
		}
	}
	return 0, false
}

// ManifestVersion is the version of reproduce.json.
const ManifestVersion = 1

// Manifest is reproduce.json: what ran, on what, and every table.
type Manifest struct {
	Version int                `json:"version"`
	Tool    string             `json:"tool"`
	Inputs  []provenance.Input `json:"inputs"`
	Setting Setting            `json:"setting"`
	Figures []*Figure          `json:"figures"`
}

// ManifestName is the manifest's file name in the output directory.
const ManifestName = "reproduce.json"

// Check says whether figs are all known figures ("all" expands to Figures) and returns them in
// the order of Figures, each once.
func Check(figs []string) ([]string, error) {
	var out []string
	for _, f := range figs {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "all" {
			return slices.Clone(Figures), nil
		}
		if !slices.Contains(Figures, f) {
			return nil, fmt.Errorf("figure %q: want one of %s or all", f, strings.Join(Figures, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	// The paper's order, whatever the order asked in.
	slices.SortFunc(out, func(a, b string) int { return slices.Index(Figures, a) - slices.Index(Figures, b) })
	if len(out) == 0 {
		return nil, fmt.Errorf("no figure named: want one of %s or all", strings.Join(Figures, ", "))
	}
	return out, nil
}

// OutputPaths are the file (the manifest) and the folders (one per figure) Run writes into dir
// for figs, for checking before the work starts.
func OutputPaths(dir string, figs []string) (files, dirs []string) {
	for _, f := range figs {
		dirs = append(dirs, filepath.Join(dir, f))
	}
	return []string{filepath.Join(dir, ManifestName)}, dirs
}

// Run runs figs (see Check) in s on in and writes their files under dir (created if missing),
// then the manifest. Each figure's outcome is also passed to done as soon as it is finished (nil
// for none), so that a caller can print it while the next one runs.
func Run(ctx context.Context, figs []string, s Setting, in Inputs, dir string, done func(*Figure)) ([]*Figure, error) {
	figs, err := Check(figs)
	if err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := in.check(figs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reproduce: output directory: %w", err)
	}
	var out []*Figure
	for _, id := range figs {
		sub := filepath.Join(dir, id)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return nil, fmt.Errorf("reproduce: %w", err)
		}
		var f *Figure
		switch id {
		case "fig6":
			f, err = Fig6(ctx, s, in, sub)
		case "fig7":
			f, err = Fig7(ctx, s, in, sub)
		case "fig8":
			f, err = Fig8(ctx, s, in, sub)
		case "fig9":
			f, err = Fig9(ctx, s, sub)
		case "fig10":
			f, err = Fig10(ctx, s, in, sub)
		case "fig13":
			f, err = Fig13(s, in, sub)
		}
		if err != nil {
			return nil, fmt.Errorf("reproduce %s: %w", id, err)
		}
		if err := writeTables(filepath.Join(sub, "tables.txt"), f); err != nil {
			return nil, fmt.Errorf("reproduce %s: %w", id, err)
		}
		f.Files = append(f.Files, filepath.Join(sub, "tables.txt"))
		out = append(out, f)
		if done != nil {
			done(f)
		}
	}
	m := Manifest{Version: ManifestVersion, Tool: in.Tool, Inputs: in.Files, Setting: s, Figures: out}
	if err := safefile.WriteJSON(filepath.Join(dir, ManifestName), m); err != nil {
		return nil, fmt.Errorf("reproduce: manifest: %w", err)
	}
	return out, nil
}

func (in *Inputs) check(figs []string) error {
	for _, f := range figs {
		switch f {
		case "fig6", "fig7", "fig8", "fig10":
			if len(in.Trace) == 0 {
				return fmt.Errorf("reproduce %s: no demand matrices (Inputs.Trace)", f)
			}
		}
		switch f {
		case "fig10":
			if in.Calibration == nil && in.Measured == nil {
				return fmt.Errorf("reproduce fig10: needs a calibration or a measured table")
			}
		case "fig13":
			if in.Calibration == nil {
				return fmt.Errorf("reproduce fig13: needs a calibration")
			}
		}
	}
	return nil
}

// TraceMatrices turns every matrix of t into the experiment API's form, named after name (the
// file, or trace.DefaultName).
func TraceMatrices(t *trace.Trace, name string) []experiment.Matrix {
	ms := make([]experiment.Matrix, len(t.Matrices))
	for k := range t.Matrices {
		m := &t.Matrices[k]
		ms[k] = experiment.Matrix{Demand: m.Demand(), Ref: emulator.MatrixRef{Index: k, Layer: m.Layer, Phase: string(m.Phase),
			Dataset: m.Dataset, Label: fmt.Sprintf("%s #%d: %s", name, k, m.Label())}}
	}
	return ms
}

// Builtin is the inputs of the figures on the built-in trace (trace.Default), without a
// calibration: enough for Figures 6 to 9.
func Builtin() (Inputs, error) {
	t, err := trace.Default()
	if err != nil {
		return Inputs{}, fmt.Errorf("built-in trace: %w", err)
	}
	return Inputs{Trace: TraceMatrices(t, trace.DefaultName), TraceName: trace.DefaultName,
		Files: []provenance.Input{provenance.Builtin("demand", "built-in trace")}, Tool: provenance.Tool()}, nil
}
