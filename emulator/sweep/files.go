package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/outdir"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// The cell (Tetris's default configuration: 800 Gbps, α_r = 10 µs) that Figure 7(b)'s
// distribution is drawn for, or the nearest cell of the grid.
const (
	DistributionBandwidth = 100e9 // bytes per second
	DistributionReconfig  = 10e-6 // seconds
)

// ManifestVersion is the version of the sweep.json file.
const ManifestVersion = 1

// Manifest is sweep.json: what the grid was run with, so that the CSV and the plots beside it can
// be traced to the code and the exact inputs that produced them.
type Manifest struct {
	Version    int                `json:"version"`
	Tool       string             `json:"tool"`
	Inputs     []provenance.Input `json:"inputs"`
	Matrices   int                `json:"matrices"`
	Algorithms []string           `json:"algorithms"`
	Reference  string             `json:"reference"`
	Bandwidths []float64          `json:"bandwidths_bytes_per_second"`
	Reconfigs  []float64          `json:"reconfigs_seconds"`
	Transfer   string             `json:"transfer_model"`
	Reconfig   string             `json:"reconfig_model"`
	RNBMapping string             `json:"rnb_mapping,omitempty"`
	// Fabric (when not Beneš) and Ablations (the Tetris ablations and Sunflow's order that are
	// on) are written when set.
	Fabric    string   `json:"fabric,omitempty"`
	Ablations []string `json:"ablations,omitempty"`
	// WearWeights are the wear weights planned at (Config.WearWeights, or the one
	// Plan.WearWeight), written when one is not zero or there are several.
	WearWeights []float64 `json:"wear_weights,omitempty"`
	// Tenants (their ports, "0-3") and Allocations are a multi-tenant sweep's (Config.Tenants).
	Tenants     []string `json:"tenants,omitempty"`
	Allocations []string `json:"allocations,omitempty"`
	ResultsFile string   `json:"results"`
	// Shards, written by sweep merge, lists the shards the results were joined from.
	Shards []ShardSource `json:"shards,omitempty"`
	// Complete is false from the moment WriteFiles starts until every file beside the manifest
	// is written: a manifest that says false belongs to an interrupted or failed write.
	Complete bool `json:"complete"`
	// Files are the names of the files this run writes beside the manifest.
	Files []string `json:"files,omitempty"`
}

// NewManifest describes res, swept under cfg by tool from inputs.
func NewManifest(res *Result, cfg Config, tool string, inputs []provenance.Input) *Manifest {
	transfer := "bandwidth (bytes / b of each cell)"
	if cfg.Transfer != nil {
		transfer = cfg.Transfer.Name()
	}
	reconfig := "parallel (α_r of each cell per switch change)"
	if cfg.ReconfigModel != nil {
		reconfig = cfg.ReconfigModel.Name() + " (α_r of each cell for planning only)"
	}
	m := &Manifest{Version: ManifestVersion, Tool: tool, Inputs: inputs, Matrices: res.Matrices,
		Algorithms: res.Algorithms, Reference: res.Reference, Bandwidths: res.Bandwidths, Reconfigs: res.Reconfigs,
		Transfer: transfer, Reconfig: reconfig, RNBMapping: cfg.RNBMapping, ResultsFile: "sweep.csv"}
	if cfg.Fabric != "" && cfg.Fabric != schedules.Benes {
		m.Fabric = string(cfg.Fabric)
	}
	for _, a := range []struct {
		on   bool
		name string
	}{{cfg.Plan.NoPartial, "no-partial"}, {cfg.Plan.NaiveRouting, "naive-routing"},
		{cfg.Plan.NoDegreeCoverage, "no-degree-coverage"}, {cfg.Plan.SunflowBySize, "sunflow-by-size"},
		{cfg.Plan.WearBalance, "wear-balance"}} {
		if a.on {
			m.Ablations = append(m.Ablations, a.name)
		}
	}
	m.Tenants = res.Tenants
	for _, a := range cfg.Allocations {
		m.Allocations = append(m.Allocations, string(a))
	}
	switch {
	case len(cfg.WearWeights) > 1 || len(cfg.WearWeights) == 1 && cfg.WearWeights[0] != 0:
		m.WearWeights = cfg.WearWeights
	case len(cfg.WearWeights) == 0 && cfg.Plan.WearWeight != 0:
		m.WearWeights = []float64{cfg.Plan.WearWeight}
	}
	return m
}

// write writes m as indented JSON, as safefile.WriteJSON does.
func (m *Manifest) write(w io.Writer) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ManifestName is the manifest's file name in the output directory.
const ManifestName = "sweep.json"

// Owned reports whether name is one that WriteFiles writes (for any set of algorithms): the
// outputs a rerun into the same directory replaces or removes.
func Owned(name string) bool {
	switch name {
	case ManifestName, "sweep.csv", "completion-vs-lower-bound.svg", "completion-vs-lower-bound.png":
		return true
	}
	if strings.HasPrefix(name, "speedup-") {
		for _, format := range plot.Formats {
			if strings.HasSuffix(name, "."+format) {
				return true
			}
		}
	}
	return false
}

// WriteFiles writes into dir (which must exist) sweep.csv, a speedup heatmap per baseline
// (speedup-<algo>.svg and .png), the distribution of completion over lower bound per matrix at
// the cell nearest DistributionBandwidth and DistributionReconfig
// (completion-vs-lower-bound.svg and .png), and, when m is not nil, m as sweep.json. It returns
// the paths written.
//
// Order, so that an interrupted write never leaves results without their manifest: sweep.json
// first, marked incomplete and listing every file to come; then the files this run does not
// write that an earlier run left (Owned names) are removed; then the files, each whole; then
// sweep.json again, marked complete. When ctx is cancelled between two files WriteFiles stops
// and returns ctx's error, leaving the manifest marked incomplete (a cancelled ctx at the start
// leaves only that manifest).
func (res *Result) WriteFiles(ctx context.Context, dir string, m *Manifest) ([]string, error) {
	type output struct {
		name string
		fill func(io.Writer) error
	}
	var outs []output
	outs = append(outs, output{"sweep.csv", res.WriteCSV})
	rows, cols := res.axisLabels()
	// One colour scale for every baseline's grid: the figures sit side by side in the report.
	grids := map[string][][]float64{}
	var all [][][]float64
	for _, algo := range res.Algorithms {
		if algo == res.Reference {
			continue
		}
		values, err := res.RatioGrid(algo)
		if err != nil {
			return nil, err
		}
		grids[algo] = values
		all = append(all, values)
	}
	scale := plot.SharedScale("completion / "+res.Reference+" completion (×)", all...)
	for _, algo := range res.Algorithms {
		if algo == res.Reference {
			continue
		}
		g := plot.Grid{
			Title: fmt.Sprintf("%s / %s completion, summed over %d matrices (>1: %s faster)",
				algo, res.Reference, res.Matrices, res.Reference),
			RowTitle: "bandwidth", ColTitle: "reconfiguration delay α_r",
			Rows: rows, Cols: cols, Values: grids[algo], Scale: scale,
		}
		for _, format := range plot.Formats {
			outs = append(outs, output{"speedup-" + algo + "." + format, func(w io.Writer) error { return plot.Heatmap(w, format, g) }})
		}
	}
	r, c := res.Nearest(DistributionBandwidth, DistributionReconfig)
	cell := &res.Cells[r][c]
	var series []plot.Series
	for a, algo := range res.Algorithms {
		if vs := cell.BoundRatios(a); len(vs) > 0 {
			series = append(series, plot.Series{Name: algo, Values: vs})
		}
	}
	// With every matrix empty there is no bound to compare with, and no distribution.
	if len(series) > 0 {
		title := fmt.Sprintf("completion / lower bound per matrix at %s, α_r = %s (%d matrices)",
			units.FormatBandwidth(cell.Bandwidth), units.FormatSeconds(cell.Reconfig), len(series[0].Values))
		for _, format := range plot.Formats {
			outs = append(outs, output{"completion-vs-lower-bound." + format, func(w io.Writer) error {
				return plot.Distribution(w, format, title, BoundLabel, series)
			}})
		}
	}
	next := make([]string, 0, len(outs)+1)
	for _, o := range outs {
		next = append(next, o.name)
	}
	var files []string
	write := func(name string, fill func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := fill(&buf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		path := filepath.Join(dir, name)
		if err := safefile.WriteFile(path, buf.Bytes()); err != nil {
			return err
		}
		files = append(files, path)
		return nil
	}
	if m != nil {
		mc := *m
		mc.Complete, mc.Files = false, next
		if err := write(ManifestName, mc.write); err != nil {
			return nil, err
		}
		files = files[:0]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	owned, err := outdir.Names(dir, Owned)
	if err != nil {
		return nil, err
	}
	if _, err := outdir.Clean(dir, owned, append(next, ManifestName), nil); err != nil {
		return nil, err
	}
	for _, o := range outs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := write(o.name, o.fill); err != nil {
			return nil, err
		}
	}
	if m != nil {
		m.Complete, m.Files = true, next
		if err := write(ManifestName, m.write); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func (res *Result) axisLabels() (rows, cols []string) {
	for _, b := range res.Bandwidths {
		rows = append(rows, units.FormatBandwidth(b))
	}
	for _, a := range res.Reconfigs {
		cols = append(cols, units.FormatSeconds(a))
	}
	return rows, cols
}

// WriteSummary prints, per baseline, the grid of ratios (rows bandwidth, columns α_r), then each
// algorithm's summed completion over the summed lower bound per cell, as aligned tables.
func (res *Result) WriteSummary(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	rows, cols := res.axisLabels()
	header := "BANDWIDTH\t" + strings.Join(cols, "\t") + "\t\n"
	for _, algo := range res.Algorithms {
		if algo == res.Reference {
			continue
		}
		g, err := res.RatioGrid(algo)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s / %s completion over %d matrices (>1: %s faster)\n", algo, res.Reference, res.Matrices, res.Reference)
		fmt.Fprint(tw, header)
		for i, row := range g {
			fmt.Fprintf(tw, "%s\t", rows[i])
			for _, v := range row {
				fmt.Fprintf(tw, "%.2f\t", v)
			}
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw)
	}
	for a, algo := range res.Algorithms {
		fmt.Fprintf(tw, "%s completion / lower bound (sums over %d matrices)\n", algo, res.Matrices)
		fmt.Fprint(tw, header)
		for i, row := range res.Cells {
			fmt.Fprintf(tw, "%s\t", rows[i])
			for _, c := range row {
				if c.LowerBound > 0 {
					fmt.Fprintf(tw, "%.2f\t", c.Algorithms[a].Completion/c.LowerBound)
				} else {
					fmt.Fprint(tw, "–\t")
				}
			}
			fmt.Fprintln(tw)
		}
		if a < len(res.Algorithms)-1 {
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

// BoundLabel is the axis of the completion/lower-bound plots: the larger of the bandwidth bound
// (Tetris §2.3) and the reconfiguration-aware one (each endpoint's least transfer time under the
// run's transfer model plus one α_r per distinct partner), as schedules.LowerBoundUnder computes
// them. It is short enough to read at the plot's size; the README's Lower bounds section says
// the rest.
const BoundLabel = "completion / max(bandwidth, reconfig bound)"
