package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// tenantFlags are emulate's multi-tenant flags (Tetris §5, isolation by Beneš sub-networks).
type tenantFlags struct {
	spec, allocation string
	fabricPorts      int
}

func (t *tenantFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&t.spec, "tenants", "", `tenants sharing the fabric, "PORTS=FILE,…" (e.g. "0-3=a.csv,4-7=b.csv"): each file's matrix is that tenant's demand on its ports in order`)
	fs.StringVar(&t.allocation, "allocation", "shared", "with --tenants: which switches each tenant may use: shared (any, one joint plan), centre (its own levels, the fabric's centre shared, one plan per tenant) or strict (its sub-Beneš alone: aligned blocks of 2^j ports)")
	fs.IntVar(&t.fabricPorts, "fabric-ports", 0, "with --tenants: the fabric's size (a power of two; default: the smallest that holds every tenant)")
}

// tenantInput is one tenant of --tenants: its ports and the matrices of its file.
type tenantInput struct {
	block schedules.Block
	file  string
	ms    []namedDemand
}

// parseTenants reads --tenants "PORTS=FILE,…", loading each file with the selection flags of
// src (--matrix, --layer, --phase, --layout apply to every file).
func parseTenants(ctx context.Context, spec string, src demandSource) ([]tenantInput, error) {
	var out []tenantInput
	for _, item := range strings.Split(spec, ",") {
		ports, file, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || strings.TrimSpace(file) == "" {
			return nil, usagef("--tenants %q: entry %q is not PORTS=FILE (e.g. 0-3=a.csv)", spec, item)
		}
		b, err := schedules.ParseBlock(ports)
		if err != nil {
			return nil, usagef("--tenants %q: %v", spec, err)
		}
		s := src
		s.path = strings.TrimSpace(file)
		ms, err := s.load(ctx)
		if err != nil {
			return nil, usagef("--tenants %s: %v", item, err)
		}
		for _, m := range ms {
			if m.Demand.N() != b.Size {
				return nil, usagef("--tenants %s: %s holds a %d-port matrix (%s) for the %d ports %s", item, s.path, m.Demand.N(), m.Label, b.Size, b)
			}
		}
		out = append(out, tenantInput{block: b, file: s.path, ms: ms})
	}
	runs := 1
	for _, t := range out {
		if len(t.ms) > 1 {
			if runs > 1 && len(t.ms) != runs {
				return nil, usagef("--tenants %q: the tenants' files give %d and %d matrices; give each the same number (matrix k of each runs together) or one", spec, runs, len(t.ms))
			}
			runs = len(t.ms)
		}
	}
	return out, nil
}

// fabricFor is --fabric-ports, or the smallest Beneš that holds every tenant.
func (t *tenantFlags) fabricFor(ins []tenantInput) (int, error) {
	hi := 0
	for _, in := range ins {
		hi = max(hi, in.block.Lo+in.block.Size)
	}
	if t.fabricPorts == 0 {
		return benes.SizeFor(hi), nil
	}
	if _, err := benes.New(t.fabricPorts); err != nil || t.fabricPorts < hi {
		return 0, usagef("--fabric-ports %d: want a power of two ≥ %d that holds every tenant", t.fabricPorts, hi)
	}
	return t.fabricPorts, nil
}

// tenantReportRun is one run of emulate --tenants --json: the matrix (its index in the tenants'
// files) and the run.
type tenantReportRun struct {
	Matrix int `json:"matrix"`
	experiment.TenantRun
}

// runEmulateTenants is emulate with --tenants.
func runEmulateTenants(cmd *cobra.Command, f *emulateFlags) error {
	if f.csvOut != "" || f.totals {
		return usagef("--tenants: --csv and --totals are not available with tenants (use --json)")
	}
	flags := cmd.Flags()
	for _, name := range []string{"schedule", "timeline", "gantt", "demand", "wear"} {
		if flags.Changed(name) {
			return usagef("--%s: not with --tenants (each tenant's file is its demand)", name)
		}
	}
	alloc, err := schedules.ParseAllocation(f.tenants.allocation)
	if err != nil {
		return usagef("--allocation: %v", err)
	}
	var cfg experiment.Config
	if cfg.Options, err = f.plan.options(); err != nil {
		return err
	}
	if cfg.Options.Fabric == schedules.Crossbar {
		return usagef("--fabric crossbar: tenant allocations are of the Beneš fabric")
	}
	if cfg.Algorithms, err = lookupAlgos(f.algo); err != nil {
		return err
	}
	if f.algo == "all" {
		cfg.Algorithms = without(cfg.Algorithms, "snb") // the crossbar has no allocations
	}
	if cfg.Exec, err = f.models.exec(cmd.Context(), cfg.Options.Bandwidth, cfg.Options.Reconfig); err != nil {
		return err
	}
	ins, err := parseTenants(cmd.Context(), f.tenants.spec, f.src)
	if err != nil {
		return err
	}
	n, err := f.tenants.fabricFor(ins)
	if err != nil {
		return err
	}
	runs := 1
	for _, in := range ins {
		runs = max(runs, len(in.ms))
	}
	var all []tenantReportRun
	for k := range runs {
		ts := make([]experiment.Tenant, len(ins))
		for i, in := range ins {
			ts[i] = experiment.Tenant{Ports: in.block, Demand: in.ms[min(k, len(in.ms)-1)].Demand}
		}
		rs, err := experiment.RunTenants(cmd.Context(), n, ts, alloc, cfg)
		if err != nil {
			return usageOr(err)
		}
		for _, r := range rs {
			all = append(all, tenantReportRun{Matrix: k, TenantRun: r})
		}
	}
	out := cmd.OutOrStdout()
	if f.jsonOut == "-" {
		out = io.Discard // standard output carries the JSON instead
	}
	fmt.Fprintf(out, "%d tenants on a %d-port Beneš fabric · allocation %s · %s\n", len(ins), n, alloc,
		strings.SplitN(experiment.Describe("", runs, cfg), " · ", 2)[1])
	if err := writeTenantTable(out, all, ins); err != nil {
		return err
	}
	if err := f.writeTenantJSON(cmd.OutOrStdout(), all, ins, alloc, n, cfg); err != nil {
		return err
	}
	return f.sayWritten(cmd)
}

// usageOr makes a refused allocation a usage error (exit 2); anything else stays as it is.
func usageOr(err error) error {
	if strings.Contains(err.Error(), "allocation: ports") || strings.Contains(err.Error(), "share ports") {
		return &usageError{err}
	}
	return err
}

func without(names []string, drop string) []string {
	var out []string
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

// writeTenantTable prints one line per matrix and algorithm: the fabric's completion, each
// tenant's, and the state changes; then what each tenant's allocation leaves it.
func writeTenantTable(w io.Writer, runs []tenantReportRun, ins []tenantInput) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "MATRIX\tALGORITHM\tFABRIC (ms)\t"
	for _, in := range ins {
		head += "TENANT " + in.block.String() + " (ms)\t"
	}
	fmt.Fprintln(tw, head+"STATE CHANGES\t")
	for _, r := range runs {
		line := fmt.Sprintf("%d\t%s\t%.4f\t", r.Matrix, r.Algorithm, r.CompletionSeconds*1e3)
		for _, t := range r.Tenants {
			line += fmt.Sprintf("%.4f\t", t.CompletionSeconds*1e3)
		}
		fmt.Fprintln(tw, line+fmt.Sprintf("%d\t", r.StateChanges))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(runs) > 0 {
		for _, t := range runs[0].Tenants {
			fmt.Fprintf(w, "tenant %s: %d paths per pair of its ports, up to %d circuits at once\n", t.Ports, t.PathsPerPair, t.MaxConcurrent)
		}
	}
	return nil
}

// writeTenantJSON writes --json: the inputs, the allocation and every run with its tenants.
func (f *emulateFlags) writeTenantJSON(stdout io.Writer, runs []tenantReportRun, ins []tenantInput, alloc schedules.Allocation, n int, cfg experiment.Config) error {
	if f.jsonOut == "" {
		return nil
	}
	var files [][2]string
	for _, in := range ins {
		files = append(files, [2]string{"tenant " + in.block.String(), in.file})
	}
	inputs, err := describeInputs(files...)
	if err != nil {
		return err
	}
	rep := map[string]any{"version": 1, "tool": provenance.Tool(), "inputs": inputs, "allocation": alloc, "fabric_ports": n,
		"bandwidth_bytes_per_second": cfg.Options.Bandwidth, "reconfig_seconds": cfg.Options.Reconfig,
		"transfer_model": cfg.Exec.Transfer.Name(), "reconfig_model": cfg.Exec.Reconfig.Name(), "runs": runs}
	if err := writeJSONTo(stdout, f.jsonOut, rep); err != nil {
		return fmt.Errorf("--json %s: %w", f.jsonOut, err)
	}
	return nil
}

func init() { subcommands = append(subcommands, newTenantsCmd) }

type interferenceFlags struct {
	src            demandSource
	plan           planFlags
	a, b           string
	fabricPorts    int
	scales, allocs string
	algo           string
	seed           uint64
	svg, jsonOut   string
}

func newTenantsCmd() *cobra.Command {
	var f interferenceFlags
	cmd := &cobra.Command{
		Use:   "tenants [--demand FILE] [--a 0-3] [--b 4-7] [--fabric-ports 16]",
		Short: "Interference between two tenants of one fabric under each switch allocation (shared, centre, strict)",
		Long: `tenants is the interference experiment of multi-tenant isolation (Tetris §5): two tenants share
one Beneš fabric, A on ports --a with a fixed demand, B on ports --b with a demand varied over
idle, --scales times a trace matrix, and a random demand of the same total. Both demands are the
top-left block of the selected matrix (--matrix, default 0) of --demand (default: the built-in
trace), of each tenant's size.

Per allocation and algorithm it prints A's completion (min / median / max over B's variants), B's
and the fabric's, A's spread (max over min) and the cost of isolation: A's completion with B idle
over A's shared completion with B idle. Allocations:
  shared  any switch; one joint plan of both demands
  centre  each tenant's own switches at the levels its block spans, the fabric's centre shared
          (its changes serialised between tenants); one plan per tenant
  strict  the tenant's sub-Beneš of the recursion alone (aligned blocks of 2^j ports): no switch
          a tenant may set is used by the other, so B cannot change A's completion at all

On 8 ports two tenants of 4 share only the middle stage, always in Bar: the default is 16 ports,
where blocks of 4 meet on switches they may turn.`,
		Example: `  tetris-hil tenants
  tetris-hil tenants --a 0-3 --b 4-7 --fabric-ports 16 --scales 0.5,1,2,4 --algo tetris,bvn --svg interference.svg`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runInterference(cmd, &f) },
	}
	fs := cmd.Flags()
	f.src.register(fs)
	f.plan.register(fs)
	fs.StringVar(&f.a, "a", "0-3", "tenant A's ports (its demand is fixed)")
	fs.StringVar(&f.b, "b", "4-7", "tenant B's ports (its demand varies)")
	fs.IntVar(&f.fabricPorts, "fabric-ports", 16, "the fabric's size (a power of two)")
	fs.StringVar(&f.scales, "scales", "0.5,1,2,4", "B's demand: these multiples of its trace block (besides idle and random)")
	fs.StringVar(&f.allocs, "allocations", "shared,centre,strict", "allocations to compare")
	fs.StringVar(&f.algo, "algo", "tetris,bvn,maxweight,sunflow,bff", "schedulers: a comma-separated list, or all (less snb, which plans on the crossbar)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of B's random variant")
	fs.StringVar(&f.svg, "svg", "", "draw A's and B's completions per allocation for the first algorithm to this .svg file")
	fs.StringVar(&f.jsonOut, "json", "", "write every row with its runs as JSON to this file (- for standard output, instead of the table)")
	return cmd
}

func runInterference(cmd *cobra.Command, f *interferenceFlags) error {
	for _, p := range []struct{ flag, path string }{{"svg", f.svg}, {"json", f.jsonOut}} {
		if p.path != "" && p.path != "-" {
			if err := safefile.Check(p.path); err != nil {
				return usagef("--%s %q: %v", p.flag, p.path, err)
			}
		}
	}
	spec, err := f.spec(cmd.Context())
	if err != nil {
		return err
	}
	if spec.Config.Exec, err = (&modelFlags{reconfModel: "parallel"}).exec(cmd.Context(), spec.Config.Options.Bandwidth, spec.Config.Options.Reconfig); err != nil {
		return err
	}
	rows, err := experiment.Interference(cmd.Context(), spec, nil)
	if err != nil {
		return usageOr(err)
	}
	out := cmd.OutOrStdout()
	if f.jsonOut == "-" {
		out = io.Discard // standard output carries the JSON instead
	}
	fmt.Fprintf(out, "tenant A %s fixed, tenant B %s over %d variants (%s) on a %d-port Beneš fabric · bandwidth %s · α_r %s\n",
		spec.A.Ports, spec.B, len(spec.Variants), variantNames(spec.Variants), spec.N,
		units.FormatBandwidth(spec.Config.Options.Bandwidth), units.FormatSeconds(spec.Config.Options.Reconfig))
	if err := experiment.WriteInterferenceTable(out, rows); err != nil {
		return err
	}
	if f.svg != "" {
		var buf bytes.Buffer
		if err := experiment.InterferencePlot(&buf, "svg", rows, spec.Config.Algorithms[0]); err != nil {
			return err
		}
		if err := safefile.WriteFile(f.svg, buf.Bytes()); err != nil {
			return fmt.Errorf("--svg %s: %w", f.svg, err)
		}
	}
	if f.jsonOut != "" {
		if err := writeJSONTo(cmd.OutOrStdout(), f.jsonOut, map[string]any{"version": 1, "tool": provenance.Tool(), "rows": rows}); err != nil {
			return fmt.Errorf("--json %s: %w", f.jsonOut, err)
		}
	}
	return nil
}

func variantNames(vs []experiment.BVariant) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Name)
	}
	return strings.Join(s, ", ")
}

// spec builds the experiment from the flags.
func (f *interferenceFlags) spec(ctx context.Context) (experiment.InterferenceSpec, error) {
	var spec experiment.InterferenceSpec
	a, err := schedules.ParseBlock(f.a)
	if err != nil {
		return spec, usagef("--a: %v", err)
	}
	b, err := schedules.ParseBlock(f.b)
	if err != nil {
		return spec, usagef("--b: %v", err)
	}
	if _, err := benes.New(f.fabricPorts); err != nil || f.fabricPorts < max(a.Lo+a.Size, b.Lo+b.Size) {
		return spec, usagef("--fabric-ports %d: want a power of two that holds ports %s and %s", f.fabricPorts, a, b)
	}
	scales, err := parseList("scales", f.scales, func(s string) (float64, error) {
		var v float64
		_, err := fmt.Sscan(s, &v)
		if err == nil && !(v > 0 && v < 1e6) {
			err = fmt.Errorf("want a positive multiple")
		}
		return v, err
	})
	if err != nil {
		return spec, err
	}
	if spec.Config.Options, err = f.plan.options(); err != nil {
		return spec, err
	}
	if spec.Config.Algorithms, err = lookupAlgos(f.algo); err != nil {
		return spec, err
	}
	spec.Config.Algorithms = without(spec.Config.Algorithms, "snb")
	for _, s := range strings.Split(f.allocs, ",") {
		al, err := schedules.ParseAllocation(strings.TrimSpace(s))
		if err != nil {
			return spec, usagef("--allocations %q: %v", f.allocs, err)
		}
		spec.Allocations = append(spec.Allocations, al)
	}
	src := f.src
	if src.matrix < 0 {
		src.matrix = 0
	}
	ds, err := src.load(ctx)
	if err != nil {
		return spec, err
	}
	m := ds[0].Demand
	if m.N() < max(a.Size, b.Size) {
		return spec, usagef("--demand: matrix %s has %d ports, fewer than a tenant's %d", ds[0].Label, m.N(), max(a.Size, b.Size))
	}
	spec.N = f.fabricPorts
	spec.A = experiment.Tenant{Ports: a, Demand: block(m, a.Size)}
	spec.B = b
	spec.Variants = experiment.ScaledVariants(block(m, b.Size), scales, f.seed)
	return spec, nil
}

// block is the top-left size × size block of m.
func block(m *schedules.Demand, size int) *schedules.Demand {
	d := schedules.NewDemand(size)
	for i := range size {
		for j := range size {
			d.Bytes[i][j] = m.At(i, j)
		}
	}
	return d
}

// registerSpec registers --tenants and --allocation alone, for commands whose fabric is given
// otherwise (verify: the schedule's).
func (t *tenantFlags) registerSpec(fs *pflag.FlagSet, what string) {
	fs.StringVar(&t.spec, "tenants", "", `tenants sharing the fabric, "PORTS=FILE,…" (e.g. "0-3=a.csv,4-7=b.csv"): each file's matrix is that tenant's demand on its ports in order; `+what)
	fs.StringVar(&t.allocation, "allocation", "shared", "with --tenants: which switches each tenant may use: shared (any), centre (its own levels, the fabric's centre shared) or strict (its sub-Beneš alone: aligned blocks of 2^j ports)")
}

// oneMatrixEach loads --tenants for a command that serves one matrix per tenant (schedule,
// verify): each file must give one (pick it with --matrix, --layer, --phase).
func (t *tenantFlags) oneMatrixEach(cmd *cobra.Command, src demandSource) ([]tenantInput, schedules.Allocation, error) {
	if cmd.Flags().Changed("demand") {
		return nil, "", usagef("--demand: not with --tenants (each tenant's file is its demand)")
	}
	alloc, err := schedules.ParseAllocation(t.allocation)
	if err != nil {
		return nil, "", usagef("--allocation: %v", err)
	}
	ins, err := parseTenants(cmd.Context(), t.spec, src)
	if err != nil {
		return nil, "", err
	}
	for _, in := range ins {
		if len(in.ms) != 1 {
			return nil, "", usagef("--tenants: %s holds %d matrices: pick the one each tenant serves with --matrix (see tetris-hil trace show)", in.file, len(in.ms))
		}
	}
	return ins, alloc, nil
}

// tenantsOf is the experiment's form of the inputs (each tenant's one matrix).
func tenantsOf(ins []tenantInput) []experiment.Tenant {
	ts := make([]experiment.Tenant, len(ins))
	for i, in := range ins {
		ts[i] = experiment.Tenant{Ports: in.block, Demand: in.ms[0].Demand}
	}
	return ts
}

// verifyTenants is verify with --tenants: schedule s (from path) against the tenants' joint
// demand on its ports, and the tenant check of the allocation (schedules.VerifyTenants).
func verifyTenants(cmd *cobra.Command, t *tenantFlags, src demandSource, s *schedules.Schedule, path string) ([]schedules.Violation, error) {
	ins, alloc, err := t.oneMatrixEach(cmd, src)
	if err != nil {
		return nil, err
	}
	if s.Fabric != schedules.Benes {
		return nil, usagef("--tenants: %s is a %s schedule; tenant allocations are of the Beneš fabric", path, s.Fabric)
	}
	f, err := benes.New(s.N)
	if err != nil {
		return nil, usagef("--tenants: %s: %v", path, err)
	}
	blocks := make([]schedules.Block, len(ins))
	joint := schedules.NewDemand(s.N)
	for i, in := range ins {
		blocks[i] = in.block
		if in.block.Lo+in.block.Size > s.N {
			return nil, usagef("--tenants: ports %s are not all on the %d-port fabric of %s", in.block, s.N, path)
		}
		d := in.ms[0].Demand
		for r := range in.block.Size {
			for c := range in.block.Size {
				joint.Bytes[in.block.Lo+r][in.block.Lo+c] = d.At(r, c)
			}
		}
	}
	if err := schedules.CheckTenants(f, blocks, alloc); err != nil {
		return nil, usagef("--tenants %q --allocation %s: %v", t.spec, alloc, err)
	}
	return append(schedules.Verify(s, joint), schedules.VerifyTenants(s, blocks, alloc)...), nil
}
