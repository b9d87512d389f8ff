package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func init() { subcommands = append(subcommands, newScheduleCmd) }

// planFlags are the scheduler inputs shared by schedule, emulate and sweep-like commands: the
// per-port bandwidth, α_r, the fabric and the ablations.
type planFlags struct {
	bandwidth, reconfig string
	fabric              string
	rnbMapping          string
	opts                schedules.Options
	// wearList makes --wear-weight a comma-separated list (sweep's axis) held in wearWeights.
	wearList    bool
	wearWeights string
}

func (p *planFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.bandwidth, "bandwidth", "800Gbps", "per-port link bandwidth, with a unit: 800Gbps (bits), 100GB/s (bytes)")
	fs.StringVar(&p.reconfig, "reconfig", "10us", "switch reconfiguration delay α_r, with a unit: 10ns, 10us, 1ms")
	p.registerShape(fs)
}

// registerShape registers what planFlags holds besides the bandwidth and α_r: the fabric, the
// ablations and the RNB mapping (sweep takes bandwidths and delays as lists of its own).
func (p *planFlags) registerShape(fs *pflag.FlagSet) {
	fs.StringVar(&p.fabric, "fabric", "benes", "fabric to plan and execute on: benes or crossbar (the ideal strictly non-blocking reference)")
	fs.BoolVar(&p.opts.NoPartial, "no-partial", false, "Tetris ablation: execute each planning matching as a barrier round")
	fs.BoolVar(&p.opts.NaiveRouting, "naive-routing", false, "Tetris ablation: route with plain looping, not RNB-aware routing")
	fs.BoolVar(&p.opts.NoDegreeCoverage, "no-degree-coverage", false, "Tetris ablation: select matchings by cost alone")
	fs.BoolVar(&p.opts.SunflowBySize, "sunflow-by-size", false, "Sunflow: order demands by size, descending, instead of (src, dst)")
	fs.StringVar(&p.rnbMapping, "rnb-mapping", "earliest", rnbMappingUsage)
	if p.wearList {
		fs.StringVar(&p.wearWeights, "wear-weight", "0", "Tetris: charge each switch state change this many mean transfer times beyond α_r in its cost estimates (switch wear, Tetris §5); 0 is Tetris as published. A list (0,1,4) is an axis: every algorithm plans at the first weight, tetris and tetris-wear again at each further one, as tetris@w1, tetris@w4")
	} else {
		fs.Float64Var(&p.opts.WearWeight, "wear-weight", 0, "Tetris: charge each switch state change this many mean transfer times beyond α_r in its cost estimates (switch wear, Tetris §5); 0 is Tetris as published")
	}
	fs.BoolVar(&p.opts.WearBalance, "wear-balance", false, "Tetris with --wear-weight: scale each switch's charge by its changes so far, sparing the most-changed switches")
}

const rnbMappingUsage = "Sunflow, BFF: how their plans get Beneš paths: earliest (each circuit in plan order on the path that can start first, as Tetris routes), looping (route the live set at each planned start) or avoid-live (a path free of the live circuits when one exists)"

// parseRNBMapping checks a --rnb-mapping value.
func parseRNBMapping(v string) (string, error) {
	switch v {
	case "earliest", "looping", "avoid-live":
		return v, nil
	}
	return "", usagef("--rnb-mapping %q: want earliest, looping or avoid-live", v)
}

// options parses the flags into scheduler options; errors name the flag and value.
func (p *planFlags) options() (schedules.Options, error) {
	o, err := p.shape()
	if err != nil {
		return o, err
	}
	if o.Bandwidth, err = units.ParseBandwidth(p.bandwidth); err != nil {
		return o, usagef("--bandwidth %q: %v", p.bandwidth, err)
	}
	if o.Reconfig, err = units.ParseDuration(p.reconfig); err != nil {
		return o, usagef("--reconfig %q: %v", p.reconfig, err)
	}
	if err := schedules.CheckSeconds("α_r", o.Reconfig); err != nil {
		return o, usagef("--reconfig %q: %v", p.reconfig, err)
	}
	if err := o.Check(); err != nil {
		return o, &usageError{err}
	}
	return o, nil
}

// shape parses the flags registerShape registers.
func (p *planFlags) shape() (schedules.Options, error) {
	o := p.opts
	var err error
	switch schedules.FabricKind(p.fabric) {
	case schedules.Benes, schedules.Crossbar:
		o.Fabric = schedules.FabricKind(p.fabric)
	default:
		return o, usagef("--fabric %q: want benes or crossbar", p.fabric)
	}
	if o.RNBMapping, err = parseRNBMapping(p.rnbMapping); err != nil {
		return o, err
	}
	return o, nil
}

// lookupAlgos resolves --algo (a comma-separated list, or "all") to registered scheduler names.
func lookupAlgos(list string) ([]string, error) {
	if strings.TrimSpace(list) == "all" {
		names := schedules.Names()
		if len(names) == 0 {
			return nil, usagef("--algo all: no scheduler is built into this binary")
		}
		return names, nil
	}
	var names []string
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, emptyEntry("algo", list)
		}
		if _, err := schedules.Lookup(a); err != nil {
			return nil, unknownName("--algo", "algorithm", a, schedules.Names(), "tetris-hil algorithms")
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		return nil, usagef("--algo %q: name at least one algorithm (or all)", list)
	}
	return names, nil
}

func newScheduleCmd() *cobra.Command {
	var f scheduleFlags
	cmd := &cobra.Command{
		Use:   "schedule --algo NAME --demand FILE [--bandwidth 800Gbps] [--reconfig 10us] -o S.json",
		Short: "Turn one demand matrix into a circuit schedule with a named scheduler",
		Long: `schedule runs one scheduler on one demand matrix and writes the schedule file (the format
every other command reads: circuits in schedule order with their Beneš paths, planning groups and
planned times). The result is checked with the verifier before it is written: a scheduler that
produces an invalid schedule is an internal error (exit 1), and nothing is written.

With --tenants (several jobs on one fabric, Tetris §5) it writes the one schedule that serves
every tenant under --allocation, planned as emulate --tenants plans it (strict: each tenant alone
in its sub-Beneš, the plans merged), checked as 'verify --tenants' checks it.

Schedulers: ` + strings.Join(schedules.Names(), ", ") + `.`,
		Example: `  tetris-hil schedule --algo tetris --demand examples/demand.csv -o s.json
  tetris-hil schedule --algo bvn --demand examples/trace.json --matrix 3 --reconfig 1us -o bvn.json
  tetris-hil schedule --algo tetris --no-partial --demand examples/demand.csv -o ablation.json
  tetris-hil schedule --tenants "0-3=examples/tenant-a.csv,4-7=examples/tenant-b.csv" --allocation strict -o tenants.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runScheduleCmd(cmd, &f) },
	}
	f.src.register(cmd.Flags())
	f.plan.register(cmd.Flags())
	cmd.Flags().StringVar(&f.algo, "algo", "tetris", "scheduler name")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "schedule file to write (default: standard output)")
	cmd.Flags().IntVar(&f.version, "schedule-version", schedules.FormatVersion, "schedule file version to write: 1 (every path as its hop list) or 2 (compact: a Beneš path as its choice bits, one line per circuit); every reader detects the version")
	f.tenants.register(cmd.Flags())
	return cmd
}

// scheduleFlags are schedule's flags.
type scheduleFlags struct {
	src       demandSource
	plan      planFlags
	algo, out string
	tenants   tenantFlags
	// version is the schedule file version written (--schedule-version).
	version int
}

func runScheduleCmd(cmd *cobra.Command, f *scheduleFlags) error {
	o, err := f.plan.options()
	if err != nil {
		return err
	}
	if f.version != schedules.FormatVersion && f.version != schedules.CompactFormatVersion {
		return usagef("--schedule-version %d: want %d or %d", f.version, schedules.FormatVersion, schedules.CompactFormatVersion)
	}
	names, err := lookupAlgos(f.algo)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return usagef("--algo %q: schedule takes one algorithm", f.algo)
	}
	if f.out != "" && f.out != "-" {
		if err := safefile.Check(f.out); err != nil {
			return usagef("-o %q: %v", f.out, err)
		}
	}
	var s *schedules.Schedule
	if f.tenants.spec != "" {
		if s, err = f.scheduleTenants(cmd, names[0], o); err != nil {
			return err
		}
	} else if s, err = f.scheduleOne(cmd, names[0], o); err != nil {
		return err
	}
	write := func(w io.Writer) error { return s.WriteVersion(w, f.version) }
	if f.out == "" || f.out == "-" {
		return write(cmd.OutOrStdout())
	}
	// Streamed: at 512 ports the file is 250 MB, and encoding it whole took 700 MB more.
	if err := safefile.WriteStream(f.out, write); err != nil {
		return fmt.Errorf("-o %s: %w", f.out, err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s: %d circuits, %d groups)\n", f.out, s.Algorithm, len(s.Circuits), s.Groups())
	return err
}

// scheduleOne plans the one matrix of --demand with algo.
func (f *scheduleFlags) scheduleOne(cmd *cobra.Command, algo string, o schedules.Options) (*schedules.Schedule, error) {
	for _, name := range []string{"allocation", "fabric-ports"} {
		if cmd.Flags().Changed(name) {
			return nil, usagef("--%s: only with --tenants", name)
		}
	}
	ds, err := f.src.load(cmd.Context())
	if err != nil {
		return nil, err
	}
	if len(ds) != 1 {
		return nil, usagef("%s holds %d matrices: pick one with --matrix", demandName(f.src.path), len(ds))
	}
	sch, _ := schedules.Lookup(algo)
	s, err := sch.Schedule(cmd.Context(), ds[0].Demand, o)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", algo, ds[0].Label, err)
	}
	if vs := schedules.Verify(s, ds[0].Demand); len(vs) > 0 {
		return nil, fmt.Errorf("internal error: %s produced an invalid schedule for %s: %s (and %d more violations)",
			algo, ds[0].Label, vs[0], len(vs)-1)
	}
	return s, nil
}

// scheduleTenants plans every tenant of --tenants under --allocation with algo
// (experiment.PlanTenants).
func (f *scheduleFlags) scheduleTenants(cmd *cobra.Command, algo string, o schedules.Options) (*schedules.Schedule, error) {
	if o.Fabric == schedules.Crossbar {
		return nil, usagef("--fabric crossbar: tenant allocations are of the Beneš fabric")
	}
	ins, alloc, err := f.tenants.oneMatrixEach(cmd, f.src)
	if err != nil {
		return nil, err
	}
	n, err := f.tenants.fabricFor(ins)
	if err != nil {
		return nil, err
	}
	s, _, err := experiment.PlanTenants(cmd.Context(), n, tenantsOf(ins), alloc, algo, o)
	if err != nil {
		return nil, usageOr(err)
	}
	return s, nil
}

func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(v)
}
