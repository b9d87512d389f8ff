package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
	"github.com/tetris-hil/tetris-hil/schedules/trace/heatmap"
	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

func init() { subcommands = append(subcommands, newTraceCmd) }

func newTraceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Import, generate, inspect and export MoE All-to-All demand traces",
		Long: `A trace is a sequence of GPU-to-GPU demand matrices (bytes from GPU i to GPU j), one per
MoE layer and All-to-All phase (dispatch, combine), with metadata saying where it came from.
The canonical form is versioned JSON; CSV (one matrix) and NumPy .npy are read too, and
token-routing JSONL from a routing logger (scripts/capture_moe_trace.py) is imported.

Without a file, commands use the built-in trace: real Mixtral-8x7B routing counts (allenai/OLMoE,
Apache-2.0) spread over 8 GPUs.`,
	}
	c.AddCommand(newTraceImportCmd(), newTraceGenCmd(), newTraceShowCmd(), newTraceExportCmd())
	return c
}

// writeTrace writes t to path atomically in canonical form.
func writeTrace(path string, t *trace.Trace) error {
	b, err := t.Marshal()
	if err != nil {
		return err
	}
	return safefile.WriteFile(path, b)
}

// requireOut checks the -o flag: given, and writable (before any work starts).
func requireOut(out string) error {
	if out == "" {
		return usagef("-o: an output file is required")
	}
	if err := safefile.Check(out); err != nil {
		return usagef("-o %q: %v", out, err)
	}
	return nil
}

func newTraceImportCmd() *cobra.Command {
	var f traceImportFlags
	c := &cobra.Command{
		Use:   "import IN -o OUT.json",
		Short: "Convert a capture (routing JSONL, CSV, .npy, expert counts) into a canonical trace",
		Example: `  tetris-hil trace import --format routing-jsonl --gpus 8 --experts 8 --hidden 4096 examples/routing.jsonl -o trace.json
  tetris-hil trace import --layout pairs examples/trace.npy -o trace.json
  tetris-hil trace import --format expert-counts --model olmoe-1b-7b --gpus 8 builtin -o olmoe.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTraceImport(cmd, args, &f) },
	}
	fs := c.Flags()
	fs.StringVar(&f.format, "format", "auto", "input format: auto (by extension/content), json, csv, npy, routing-jsonl, expert-counts")
	fs.StringVarP(&f.out, "output", "o", "", "output trace file (.json)")
	fs.StringVar(&f.model, "model", "", "model name recorded in the trace (expert-counts: which model of the file, e.g. mixtral-8x7b)")
	fs.IntVar(&f.gpus, "gpus", 8, "GPUs (routing-jsonl, expert-counts)")
	fs.IntVar(&f.experts, "experts", 0, "routed experts per layer (routing-jsonl)")
	fs.IntVar(&f.hidden, "hidden", 0, "hidden size: elements sent per token and expert (routing-jsonl)")
	fs.IntVar(&f.dtypeBytes, "dtype-bytes", 2, "bytes per element (2 for bf16)")
	fs.StringVar(&f.placement, "placement", "contiguous", "expert placement: contiguous, round-robin, or a JSON file listing each expert's GPU(s)")
	fs.BoolVar(&f.onePerGPU, "one-copy-per-gpu", false, "routing-jsonl: send a token once to a GPU holding several of its experts")
	fs.StringVar(&f.layout, "layout", string(trace.LayoutLayers), "csv/npy: layers (matrix k = layer k dispatch) or pairs (dispatch, combine per layer)")
	fs.IntVar(&f.tokens, "tokens-per-gpu", 2048, "expert-counts: scale totals to this many tokens per GPU (0: keep the measured totals)")
	fs.Uint64Var(&f.seed, "seed", 1, "expert-counts: seed of the spreading over source GPUs")
	fs.StringVar(&f.datasets, "datasets", "", "expert-counts: comma-separated datasets (default: all)")
	fs.IntVar(&f.maxPorts, "max-ports", schedules.DefaultMaxPorts, "reject matrices larger than this")
	return c
}

// traceImportFlags are the command's flags.
type traceImportFlags struct {
	format, out, model, placement, layout, datasets string
	gpus, experts, hidden, dtypeBytes, tokens       int
	onePerGPU                                       bool
	seed                                            uint64
	maxPorts                                        int
}

func runTraceImport(cmd *cobra.Command, args []string, f *traceImportFlags) error {
	in := args[0]
	if err := requireOut(f.out); err != nil {
		return err
	}
	if f.maxPorts < 1 {
		return usagef("--max-ports %d: want at least 1", f.maxPorts)
	}
	var t *trace.Trace
	var err error
	if f.format == "auto" && isRoutingLog(in) {
		// Token-routing JSONL under any name (loggers often write .json): import it as such
		// rather than tell the user to run the command they just ran with --format.
		f.format = "routing-jsonl"
	}
	switch f.format {
	case "routing-jsonl":
		t, err = importRouting(cmd.Context(), in, trace.RoutingOptions{GPUs: f.gpus, Experts: f.experts, Hidden: f.hidden,
			DtypeBytes: f.dtypeBytes, OnePerGPU: f.onePerGPU, MaxPorts: f.maxPorts, Model: f.model}, f.placement)
	case "expert-counts":
		t, err = importCounts(cmd.Context(), in, synth.CountsConfig{Model: f.model, GPUs: f.gpus, TokensPerGPU: f.tokens,
			DtypeBytes: f.dtypeBytes, Placement: f.placement, Seed: f.seed}, f.datasets)
	case "auto", "json", "csv", "npy":
		t, err = importMatrices(in, f.format, f.layout, f.maxPorts)
		if err == nil {
			annotate(cmd, t, f.model, f.hidden, f.dtypeBytes, f.experts)
		}
	default:
		return usagef("--format %q: want auto, json, csv, npy, routing-jsonl or expert-counts", f.format)
	}
	if err != nil {
		return err
	}
	if err := writeTrace(f.out, t); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d matrices, n = %d\n", f.out, len(t.Matrices), t.N())
	return nil
}

// importRouting reads a token-routing log through the routing kind's size limit (it is held
// whole while the matrices are built).
func importRouting(ctx context.Context, in string, o trace.RoutingOptions, placement string) (*trace.Trace, error) {
	if o.Experts <= 0 {
		return nil, usagef("--experts %d: routing-jsonl needs the number of routed experts", o.Experts)
	}
	if o.Hidden <= 0 {
		return nil, usagef("--hidden %d: routing-jsonl needs the model's hidden size", o.Hidden)
	}
	if o.GPUs <= 0 || o.GPUs > o.MaxPorts {
		return nil, usagef("--gpus %d: want 1..%d (--max-ports)", o.GPUs, o.MaxPorts)
	}
	if o.DtypeBytes <= 0 {
		return nil, usagef("--dtype-bytes %d: want at least 1", o.DtypeBytes)
	}
	p, err := placementFlag(ctx, placement, o.Experts, o.GPUs)
	if err != nil {
		return nil, err
	}
	o.Placement = p
	f, err := readlimit.Open(ctx, in, readlimit.Routing)
	if err != nil {
		return nil, inputError(in, err)
	}
	defer f.Close()
	t, err := trace.ImportRouting(f, in, o)
	if err != nil {
		return nil, &usageError{err}
	}
	return t, nil
}

// inputError is the one-line exit-2 error for an input that cannot be opened: its path and
// why (missing, not a regular file, above its kind's limit).
func inputError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return usagef("%s: %v", path, pe.Err)
	}
	return usagef("%v", err)
}

func placementFlag(ctx context.Context, s string, experts, gpus int) (trace.Placement, error) {
	if s == "contiguous" || s == "round-robin" {
		return trace.ParsePlacement(s, experts, gpus)
	}
	f, err := readlimit.Open(ctx, s, readlimit.Placement)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return trace.Placement{}, usagef("--placement %q: not contiguous or round-robin, and not a readable file: %v", s, err)
	} else if err != nil {
		return trace.Placement{}, usagef("--placement %q: %v", s, err)
	}
	defer f.Close()
	p, err := trace.ReadPlacement(f, s, experts, gpus)
	if err != nil {
		return trace.Placement{}, usagef("--placement: %v", err)
	}
	return p, nil
}

func importCounts(ctx context.Context, in string, cfg synth.CountsConfig, datasets string) (*trace.Trace, error) {
	var c *synth.ExpertCounts
	var err error
	if in == "builtin" {
		c, err = synth.RealCounts()
		cfg.License = synth.CountsLicense
	} else {
		var f *readlimit.File
		if f, err = readlimit.Open(ctx, in, readlimit.ExpertCounts); err != nil {
			return nil, inputError(in, err)
		}
		defer f.Close()
		c, err = synth.ReadExpertCounts(f, in)
	}
	if err != nil {
		return nil, &usageError{err}
	}
	if cfg.Model == "" {
		return nil, usagef("--model: expert-counts needs the model to take from %s", in)
	}
	if datasets != "" {
		cfg.Datasets = strings.Split(datasets, ",")
	}
	t, err := synth.FromCounts(c, cfg)
	if err != nil {
		return nil, usagef("%s: %v", in, err)
	}
	return t, nil
}

func importMatrices(in, format, layout string, maxPorts int) (*trace.Trace, error) {
	lay, err := trace.ParseLayout(layout)
	if err != nil {
		return nil, usagef("--layout: %v", err)
	}
	var f trace.Format // "auto": by extension or content
	switch format {
	case "json":
		f = trace.FormatJSON
	case "csv":
		f = trace.FormatCSV
	case "npy":
		f = trace.FormatNPY
	}
	t, err := trace.LoadAs(in, f, trace.LoadOptions{MaxPorts: maxPorts, Layout: lay})
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, usagef("%s: %v", in, pe.Err)
	} else if err != nil {
		return nil, usagef("%v", err)
	}
	return t, nil
}

// annotate records the model flags a user gave for a metadata-free matrix file.
func annotate(cmd *cobra.Command, t *trace.Trace, model string, hidden, dtypeBytes, experts int) {
	if cmd.Flags().Changed("model") {
		t.Meta.Model = model
	}
	if cmd.Flags().Changed("hidden") {
		t.Meta.HiddenSize = hidden
	}
	if cmd.Flags().Changed("dtype-bytes") {
		t.Meta.DtypeBytes = dtypeBytes
	}
	if cmd.Flags().Changed("experts") {
		t.Meta.Experts = experts
	}
}

func newTraceGenCmd() *cobra.Command {
	var f traceGenFlags
	c := &cobra.Command{
		Use:   "gen -o OUT.json",
		Short: "Generate a synthetic MoE All-to-All trace (Zipf-like expert popularity, per-layer variation)",
		Long: `Generates, for every MoE layer, a dispatch matrix and its transpose (combine). Every GPU
holds --tokens-per-gpu tokens; each token picks top-k distinct experts with Zipf-like
popularity (exponent --skew) that a seeded permutation and jitter vary per layer and per source
GPU; each routing sends hidden × dtype bytes to the expert's GPU. Presets (hidden/experts/top-k/
layers): mixtral-8x7b 4096/8/2/32, mixtral-8x22b 6144/8/2/56, deepseek-moe-16b 2048/64 (+2 shared,
no traffic)/6/28 with layer 0 dense (no All-to-All). With more GPUs than experts, experts are
replicated and a token uses the replica (source GPU mod replicas). --expert-per-gpu instead gives
the model one expert per GPU, so that every GPU sends to every other however many there are (the
scaling setting of Tetris Figure 9). The same seed gives the same bytes on every platform.`,
		Example: `  tetris-hil trace gen --model mixtral-8x22b --gpus 8 --tokens-per-gpu 2048 --layers 4 --seed 1 -o t.json
  tetris-hil trace gen --model mixtral-8x22b --gpus 32 --tokens-per-gpu 600 --layers 4 --expert-per-gpu -o fig9.json
  tetris-hil trace gen --model custom --hidden 4096 --experts 128 --top-k 8 --layers 2 --gpus 64 -o big.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runTraceGen(cmd, &f) },
	}
	fs := c.Flags()
	fs.StringVar(&f.model, "model", "mixtral-8x7b", "model preset: "+strings.Join(synth.PresetNames(), ", ")+", or custom")
	fs.IntVar(&f.gpus, "gpus", 8, "GPUs (1.."+strconv.Itoa(synth.MaxGPUs)+")")
	fs.IntVar(&f.tokens, "tokens-per-gpu", 2048, "tokens on each GPU per layer")
	fs.IntVar(&f.layers, "layers", 0, "layers to generate (default: the model's)")
	fs.Float64Var(&f.skew, "skew", 1.0, "Zipf exponent of expert popularity (0: uniform)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	fs.IntVar(&f.dtypeBytes, "dtype-bytes", 2, "bytes per element (2 for bf16)")
	fs.StringVar(&f.placement, "placement", "contiguous", "expert placement: contiguous or round-robin")
	fs.BoolVar(&f.expertPerGPU, "expert-per-gpu", false, "one routed expert per GPU instead of the model's (every GPU sends to every other; Tetris Figure 9)")
	fs.IntVar(&f.hidden, "hidden", 4096, "custom: hidden size")
	fs.IntVar(&f.experts, "experts", 8, "custom: routed experts")
	fs.IntVar(&f.topK, "top-k", 2, "custom: experts per token")
	fs.IntVar(&f.shared, "shared-experts", 0, "custom: shared experts (local, no traffic)")
	fs.StringVarP(&f.out, "output", "o", "", "output trace file (.json)")
	return c
}

// traceGenFlags are trace gen's flags.
type traceGenFlags struct {
	model, out, placement            string
	gpus, tokens, layers, dtypeBytes int
	hidden, experts, topK, shared    int
	skew                             float64
	seed                             uint64
	expertPerGPU                     bool
}

func runTraceGen(cmd *cobra.Command, f *traceGenFlags) error {
	if err := requireOut(f.out); err != nil {
		return err
	}
	var m synth.Model
	if f.model == "custom" {
		m = synth.Model{Name: "custom", Hidden: f.hidden, Experts: f.experts, TopK: f.topK, SharedExperts: f.shared, Layers: f.layers}
		if f.layers == 0 {
			return usagef("--layers: --model custom needs --layers")
		}
	} else {
		var err error
		if m, err = synth.LookupModel(f.model); err != nil {
			return usagef("--model: %v", err)
		}
		if f.layers > m.Layers {
			return usagef("--layers %d: %s has %d layers", f.layers, f.model, m.Layers)
		}
		for _, fl := range []string{"hidden", "experts", "top-k", "shared-experts"} {
			if cmd.Flags().Changed(fl) {
				return usagef("--%s: only for --model custom (the %s preset fixes it)", fl, f.model)
			}
		}
	}
	ctx := cmd.Context()
	t, err := interruptible(ctx, func() (*trace.Trace, error) {
		return synth.Generate(synth.Config{Model: m, GPUs: f.gpus, TokensPerGPU: f.tokens, Layers: f.layers,
			Skew: f.skew, Seed: f.seed, DtypeBytes: f.dtypeBytes, Placement: f.placement, ExpertPerGPU: f.expertPerGPU})
	})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return usagef("%v", err)
	}
	b, err := interruptible(ctx, t.Marshal)
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(f.out, b); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %d GPUs, %d matrices\n", f.out, m.Name, f.gpus, len(t.Matrices))
	return nil
}

func newTraceShowCmd() *cobra.Command {
	var f traceShowFlags
	c := &cobra.Command{
		Use:   "show [FILE]",
		Short: "Print a trace's matrices: loads, bottleneck endpoints, degree, skew, lower bounds",
		Long: `For each matrix: total bytes, the largest transmitter (row) and receiver (column) load,
the bottleneck endpoints (those whose load sets the bandwidth bound), the maximum degree Δ,
the skew (max endpoint load / mean load) and both lower bounds on completion time at
--bandwidth and --reconfig: load/b, and load/b + (degree − 1)·α_r. Local (diagonal) traffic
is ignored. --heatmap draws one matrix (--matrix, default the first selected) as a PNG.`,
		Example: `  tetris-hil trace show
  tetris-hil trace show t.json --layer 3 --bandwidth 100GB/s --reconfig 1us
  tetris-hil trace show --matrix 0 --heatmap m0.png`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTraceShow(cmd, args, &f) },
	}
	f.src.register(c.Flags())
	c.Flags().StringVar(&f.bw, "bandwidth", "800Gbps", "per-port link bandwidth for the lower bounds")
	c.Flags().StringVar(&f.reconfig, "reconfig", "10us", "switch reconfiguration delay α_r for the lower bounds")
	c.Flags().StringVar(&f.heat, "heatmap", "", "write a PNG heatmap of one matrix (--matrix) to this file")
	return c
}

// traceShowFlags are the command's flags.
type traceShowFlags struct {
	src                demandSource
	bw, reconfig, heat string
}

func runTraceShow(cmd *cobra.Command, args []string, f *traceShowFlags) error {
	if len(args) == 1 {
		if cmd.Flags().Changed("demand") {
			return usagef("give the file either as an argument or with --demand, not both")
		}
		f.src.path = args[0]
	}
	if f.heat != "" {
		if err := safefile.Check(f.heat); err != nil {
			return usagef("--heatmap %q: %v", f.heat, err)
		}
	}
	b, err := units.ParseBandwidth(f.bw)
	if err != nil {
		return usagef("--bandwidth: %v", err)
	}
	ar, err := units.ParseDuration(f.reconfig)
	if err != nil {
		return usagef("--reconfig: %v", err)
	}
	t, name, err := f.src.loadTrace(cmd.Context())
	if err != nil {
		return err
	}
	sel, err := f.src.selectFrom(t, name)
	if err != nil {
		return err
	}
	printTrace(cmd.OutOrStdout(), t, name, sel, b, ar)
	if f.heat != "" {
		nd := sel[0]
		var buf bytes.Buffer
		if err := heatmap.Draw(&buf, nd.Demand, fmt.Sprintf("%s #%d: %s", filepath.Base(name), nd.Index, t.Matrices[nd.Index].Label())); err != nil {
			return err
		}
		if err := safefile.WriteFile(f.heat, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "heatmap of #%d written to %s (bottleneck endpoints outlined in red)\n", nd.Index, f.heat)
	}
	return nil
}

func printTrace(w io.Writer, t *trace.Trace, name string, sel []namedDemand, bw, alphaR float64) {
	m := t.Meta
	fmt.Fprintf(w, "trace %s: n = %d GPUs, %d matrices", name, t.N(), len(t.Matrices))
	if len(sel) != len(t.Matrices) {
		fmt.Fprintf(w, " (%d selected)", len(sel))
	}
	fmt.Fprintln(w)
	if m.Model != "" {
		fmt.Fprintf(w, "model %s: hidden %d, dtype %d B, top-%d of %d experts, %d tokens/GPU, placement %s\n",
			m.Model, m.HiddenSize, m.DtypeBytes, m.TopK, m.Experts, m.TokensPerGPU, m.Placement)
	}
	if m.Source != "" {
		fmt.Fprintf(w, "source: %s\n", m.Source)
	}
	if m.License != "" {
		fmt.Fprintf(w, "licence: %s\n", m.License)
	}
	fmt.Fprintf(w, "bounds at %s per port, α_r = %s\n\n", units.FormatBandwidth(bw), units.FormatSeconds(alphaR))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\tlayer\tphase\tdataset\ttotal\tmax Tx\tmax Rx\tbottlenecks\tΔ\tskew\tRx max/mean\tT_min\tT_min+d·α_r\t")
	var total int64
	for _, nd := range sel {
		mx := &t.Matrices[nd.Index]
		st := nd.Demand.Statistics()
		bd := schedules.LowerBound(nd.Demand, bw, alphaR)
		total += st.Total
		var bn []string
		for _, e := range st.Bottlenecks {
			bn = append(bn, e.String())
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.3f\t%.3f\t%s\t%s\t\n", nd.Index, mx.Layer, mx.Phase, orDash(mx.Dataset),
			units.FormatBytes(st.Total), units.FormatBytes(st.MaxRowLoad), units.FormatBytes(st.MaxColLoad),
			strings.Join(bn, ","), st.MaxDegree, st.Skew, st.ReceiverSkew, units.FormatSeconds(bd.Bandwidth), units.FormatSeconds(bd.Reconfig))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntotal over the fabric: %s (%d bytes)\n", units.FormatBytes(total), total)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newTraceExportCmd() *cobra.Command {
	var f traceExportFlags
	c := &cobra.Command{
		Use:   "export [FILE] -o OUT.csv|OUT.npy|OUT.json",
		Short: "Write a trace's matrices as CSV (one matrix), .npy (all selected) or canonical JSON",
		Long: `Exports for tools outside tetris-hil and for round trips: .npy holds the selected matrices
as one little-endian int64 array (n×n for one, m×n×n for several), in trace order; import it
back with --layout pairs when each layer has dispatch then combine. CSV holds exactly one
matrix: pick it with --matrix (or --layer and --phase). The format follows the extension of
-o unless --to says otherwise.`,
		Example: `  tetris-hil trace export --matrix 0 -o m0.csv
  tetris-hil trace export t.json --layer 3 -o layer3.npy
  tetris-hil trace export -o builtin.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTraceExport(cmd, args, &f) },
	}
	f.src.register(c.Flags())
	c.Flags().StringVarP(&f.out, "output", "o", "", "output file")
	c.Flags().StringVar(&f.to, "to", "", "output format: csv, npy or json (default: from the -o extension)")
	return c
}

// traceExportFlags are trace export's flags.
type traceExportFlags struct {
	src     demandSource
	out, to string
}

func runTraceExport(cmd *cobra.Command, args []string, f *traceExportFlags) error {
	if err := requireOut(f.out); err != nil {
		return err
	}
	if len(args) == 1 {
		if cmd.Flags().Changed("demand") {
			return usagef("give the file either as an argument or with --demand, not both")
		}
		f.src.path = args[0]
	}
	t, name, err := f.src.loadTrace(cmd.Context())
	if err != nil {
		return err
	}
	sel, err := f.src.selectFrom(t, name)
	if err != nil {
		return err
	}
	if f.to == "" {
		f.to = strings.TrimPrefix(strings.ToLower(filepath.Ext(f.out)), ".")
	}
	indices := make([]int, len(sel))
	for i, nd := range sel {
		indices[i] = nd.Index
	}
	var buf bytes.Buffer
	switch err := t.Export(&buf, f.to, indices); {
	case errors.Is(err, trace.ErrOneMatrix):
		return usagef("--matrix: CSV holds one matrix and %d are selected; pick one with --matrix (0..%d)", len(sel), len(t.Matrices)-1)
	case errors.Is(err, trace.ErrExportFormat):
		return usagef("--to %q: want csv, npy or json (or an -o file with that extension)", f.to)
	case err != nil:
		return err
	}
	if err := safefile.WriteFile(f.out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d matrices as %s\n", f.out, len(sel), f.to)
	return nil
}
