package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/tetris-hil/tetris-hil/emulator/holo"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
)

func init() { subcommands = append(subcommands, newBroadcastCmd) }

// broadcastFlags are the model parameters both broadcast commands take.
type broadcastFlags struct {
	algo, tc, tr, tw, tb, tf, size, header, bench, jsonOut string
	tcHalf                                                 bool
}

func (f *broadcastFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.algo, "algo", "all", "algorithms: naive, ring, tree, tree-ring, tree-ring-alt, a comma-separated list, or all")
	fs.StringVar(&f.tc, "tc", "", "configuration time T_c; alone it means T_r = 0, T_w = T_c (default 5ms)")
	fs.StringVar(&f.tr, "tr", "", "time of one request at the control station, serialised (T_r; with --tw)")
	fs.StringVar(&f.tw, "tw", "", "settle time after a request, overlapping (T_w; with --tr)")
	fs.StringVar(&f.bench, "switch-bench", "", "take T_r and T_w from this switch bench file (tetris-hil switch bench)")
	fs.StringVar(&f.tb, "tb", "1us", "time per byte through the software stack (T_b)")
	fs.StringVar(&f.tf, "tf", "10ns", "time per byte through the forwarding unit (T_f)")
	fs.StringVar(&f.size, "size", "1KiB", "message size S")
	fs.StringVar(&f.header, "header", "1B", "header size H: each tree stage pays H·T_d to lift the header (1 byte gives the paper's T_d)")
	fs.StringVar(&f.jsonOut, "json", "", "also write the results as JSON to this file (- for standard output)")
}

// params turns the flags into model parameters; every error names its flag and value.
func (f *broadcastFlags) params(cmd *cobra.Command) (holo.Params, error) {
	p := holo.Params{}
	dur := func(name, v string) (float64, error) {
		x, err := units.ParseDuration(v)
		if err != nil {
			return 0, usagef("--%s %q: %v", name, v, err)
		}
		return x, nil
	}
	changed := func(name string) bool { return cmd.Flags().Changed(name) }
	var err error
	switch {
	case f.bench != "" && (changed("tc") || changed("tr") || changed("tw")):
		return p, usagef("--switch-bench %q: T_r and T_w come from the file; drop --tc, --tr and --tw", f.bench)
	case changed("tc") && (changed("tr") || changed("tw")):
		return p, usagef("--tc %q: give either --tc or --tr with --tw, not both", f.tc)
	case changed("tr") != changed("tw"):
		return p, usagef("--tr %q --tw %q: give both (or --tc alone, meaning T_r = 0)", f.tr, f.tw)
	case f.bench != "":
		b, err := benchfile.Read(f.bench)
		if err != nil {
			return p, &usageError{fmt.Errorf("--switch-bench: %w", err)}
		}
		p.TR, p.TW = b.TRSeconds, b.TWSeconds
	case changed("tr"):
		if p.TR, err = dur("tr", f.tr); err != nil {
			return p, err
		}
		if p.TW, err = dur("tw", f.tw); err != nil {
			return p, err
		}
	default:
		tc := f.tc
		if tc == "" {
			tc = "5ms"
		}
		if p.TW, err = dur("tc", tc); err != nil {
			return p, err
		}
	}
	if p.TB, err = dur("tb", f.tb); err != nil {
		return p, err
	}
	if p.TF, err = dur("tf", f.tf); err != nil {
		return p, err
	}
	if p.TF <= 0 {
		return p, usagef("--tf %q: want a positive time per byte", f.tf)
	}
	if p.TB < p.TF {
		return p, usagef("--tb %q: below --tf %q; the stack cannot be faster than the forwarding unit", f.tb, f.tf)
	}
	if p.Size, err = units.ParseBytes(f.size); err != nil || p.Size < 1 {
		return p, usagef("--size %q: want a message size of at least 1 byte, e.g. 1KiB", f.size)
	}
	if p.Header, err = units.ParseBytes(f.header); err != nil || p.Header > p.Size {
		return p, usagef("--header %q: want a header size from 0 to the message size (%s)", f.header, units.FormatBinary(p.Size))
	}
	return p, nil
}

func (f *broadcastFlags) algorithms() ([]string, error) {
	as, err := holo.ParseAlgorithms(f.algo)
	if err != nil {
		return nil, usagef("--algo %q: %v", f.algo, err)
	}
	return as, nil
}

// writeJSON writes v to --json's file, or to standard output for "-".
func (f *broadcastFlags) writeJSON(cmd *cobra.Command, v any) error {
	if f.jsonOut == "-" {
		return writeIndentedJSON(cmd.OutOrStdout(), v)
	}
	if err := safefile.WriteJSON(f.jsonOut, v); err != nil {
		return fmt.Errorf("--json %s: %w", f.jsonOut, err)
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", f.jsonOut)
	return err
}

func newBroadcastCmd() *cobra.Command {
	var f broadcastFlags
	var nodes int
	cmd := &cobra.Command{
		Use:   "broadcast [--algo LIST|all] --nodes N [--tc 5ms | --tr T --tw T | --switch-bench FILE] [--tb 1us --tf 10ns --size 1KiB]",
		Short: "Broadcast algorithms on the electroholographic switch model: simulated against closed forms",
		Long: `broadcast runs the broadcast algorithms of Er-El and Feitelson, "Communication Models for a
Free-Space Optical Cross-Connect Switch" (§3.1), on an event-driven model of their electroholographic
switch (§2.3–§2.4) and prints, per algorithm, the simulated time next to the paper's closed form.

The model: N nodes; node i's transmissions go to a_i of the configuration vector; CSet(i, k)
re-points node i. A change costs T_c = T_r + T_w: requests are served one at a time by the control
station (T_r each) while the settle times (T_w) overlap, so k changes at once take k·T_r + T_w.
A send through the software stack costs S·T_b, a forward by the forwarding unit (FU) S·T_f, and
T_d = T_b − T_f. Packets carry a broadcast bit and a TTL; the FU forwards, delivers or both, and
has priority over the NIC. Collisions, duplicate deliveries and unreached nodes are errors.

Algorithms: naive (N−1 CSets and sends), ring (all nodes point to the next, FU forwarding),
tree (lg N stages of CSet and forward), tree-ring (forward k = (H·T_d + T_c)/(S·T_f) + 1 nodes along
the ring while the end node branches into its fragment), tree-ring-alt (every node that has the
message branches every stage).

The tree forms' per-stage T_d (without S) is read as a header cost H·T_d: only the header goes up
the stack to trigger the next change (§2.4); --header sets H (1 byte gives the paper's T_d).
--tc alone means T_r = 0 and T_w = T_c (the paper's T_r ≪ T_w); --tr/--tw or --switch-bench set both.`,
		Example: `  tetris-hil broadcast --nodes 1024
  tetris-hil broadcast --algo ring,tree --nodes 64 --tc 5ms --tf 500ns --tb 50us --size 1000B
  tetris-hil broadcast --nodes 256 --tr 100us --tw 5ms --json out.json
  tetris-hil broadcast --nodes 256 --switch-bench examples/switch-bench.json --tc-half`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := f.params(cmd)
			if err != nil {
				return err
			}
			if nodes < 2 || nodes > holo.MaxNodes {
				return usagef("--nodes %d: want 2..%d", nodes, holo.MaxNodes)
			}
			p.Nodes = nodes
			as, err := f.algorithms()
			if err != nil {
				return err
			}
			if f.jsonOut != "" && f.jsonOut != "-" {
				if err := safefile.Check(f.jsonOut); err != nil {
					return usagef("--json %q: %v", f.jsonOut, err)
				}
			}
			var points []holo.Point
			for _, a := range as {
				pt, err := holo.Evaluate(cmd.Context(), a, p, f.tcHalf)
				if err != nil {
					return err
				}
				points = append(points, pt)
			}
			if f.jsonOut != "-" {
				if err := holo.WriteTable(cmd.OutOrStdout(), p, points); err != nil {
					return err
				}
			}
			if f.jsonOut != "" {
				return f.writeJSON(cmd, points)
			}
			return nil
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().IntVar(&nodes, "nodes", 1024, "number of nodes N")
	cmd.Flags().BoolVar(&f.tcHalf, "tc-half", false, "also find T_c^0.5, the T_c at which each broadcast takes twice its T_c = 0 time (§3.3)")
	cmd.AddCommand(newBroadcastSweepCmd())
	return cmd
}

// sweepReport is the --json file of broadcast sweep.
type sweepReport struct {
	Version    int              `json:"version"`
	Params     holo.Params      `json:"params"`
	Points     []holo.Point     `json:"points"`
	Crossovers []holo.Crossover `json:"crossovers"`
}

func newBroadcastSweepCmd() *cobra.Command {
	var f broadcastFlags
	var nodesSpec, plotOut string
	cmd := &cobra.Command{
		Use:   "sweep --nodes 4:2048 [--algo LIST|all] [model flags] [--plot OUT.svg|png] [--json FILE]",
		Short: "Broadcast time against N per algorithm, T_c^0.5 per N, and the crossovers with the ring",
		Long: `sweep runs the broadcast algorithms at each N of --nodes (A:B doubles from A to B, and adds B; or
a comma-separated list) and prints the simulated time (closed form) and T_c^0.5 per N and
algorithm: the T_c, with T_r = 0, at which the broadcast takes twice its T_c = 0 time (Er-El and
Feitelson §3.3; from the simulator by bisection, and from the closed form where it is linear).

It then simulates every N from the smallest to the largest of --nodes and prints the crossovers:
the N at which the ring is at least as fast as the tree, the tree embedded in a ring and its
alternating version, by the paper's simplified inequalities of §3.2 ((N−1)/lg N < 11 gives N < 68;
(N−1)/(lg N − 3.3) < 12 gives N < 10), by the closed forms, and by the simulator.

--plot draws time against N (both axes logarithmic) for every N of that scan: simulated solid,
closed form dashed. The paper's regime is a change worth about ten forwards, e.g.
--tc 5ms --tf 500ns --tb 50us --size 1000B; the defaults (T_f = 10ns) make it worth 489.`,
		Example: `  tetris-hil broadcast sweep --nodes 4:2048 --plot broadcast.png
  tetris-hil broadcast sweep --nodes 4:2048 --tc 5ms --tf 500ns --tb 50us --size 1000B --plot paper.svg
  tetris-hil broadcast sweep --nodes 16,64,256 --algo ring,tree --json sweep.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := f.params(cmd)
			if err != nil {
				return err
			}
			ns, err := parseNodeList(nodesSpec)
			if err != nil {
				return usagef("--nodes %q: %v", nodesSpec, err)
			}
			as, err := f.algorithms()
			if err != nil {
				return err
			}
			format := ""
			if plotOut != "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(plotOut)), ".")
				if format != "svg" && format != "png" {
					return usagef("--plot %q: the file must end in .svg or .png", plotOut)
				}
				if err := safefile.Check(plotOut); err != nil {
					return usagef("--plot %q: %v", plotOut, err)
				}
			}
			if f.jsonOut != "" && f.jsonOut != "-" {
				if err := safefile.Check(f.jsonOut); err != nil {
					return usagef("--json %q: %v", f.jsonOut, err)
				}
			}
			ctx := cmd.Context()
			var points []holo.Point
			for _, n := range ns {
				q := p
				q.Nodes = n
				for _, a := range as {
					pt, err := holo.Evaluate(ctx, a, q, true)
					if err != nil {
						return err
					}
					points = append(points, pt)
				}
			}
			// The crossovers need the ring and the three trees whatever --algo shows.
			scanAlgos := append([]string(nil), as...)
			for _, a := range []string{holo.Ring, holo.Tree, holo.TreeRing, holo.TreeRingAlt} {
				if !contains(scanAlgos, a) {
					scanAlgos = append(scanAlgos, a)
				}
			}
			logger.Info().Int("from", ns[0]).Int("to", ns[len(ns)-1]).Msg("simulating every N for the crossovers")
			var progress func(done, total int)
			if tty, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(int(tty.Fd())) {
				bar := progressbar.NewOptions(ns[len(ns)-1]-ns[0]+1, progressbar.OptionSetWriter(tty),
					progressbar.OptionSetDescription("crossover scan"), progressbar.OptionShowCount(),
					progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
				defer func() { _ = bar.Finish() }()
				progress = func(done, _ int) { _ = bar.Set(done) }
			}
			sc, err := holo.ScanNodes(ctx, p, ns[0], ns[len(ns)-1], scanAlgos, progress)
			if err != nil {
				return err
			}
			cross := sc.Crossovers()
			if f.jsonOut != "-" {
				if err := holo.WriteSweep(cmd.OutOrStdout(), p, as, points, cross); err != nil {
					return err
				}
			}
			if plotOut != "" {
				sc.Algorithms = as
				var b bytes.Buffer
				if err := sc.Plot(&b, format); err != nil {
					return err
				}
				if err := safefile.WriteFile(plotOut, b.Bytes()); err != nil {
					return fmt.Errorf("--plot %s: %w", plotOut, err)
				}
				// Where standard output carries the JSON, the note goes to standard error.
				note := cmd.OutOrStdout()
				if f.jsonOut == "-" {
					note = cmd.ErrOrStderr()
				}
				fmt.Fprintf(note, "wrote %s\n", plotOut)
			}
			if f.jsonOut != "" {
				return f.writeJSON(cmd, sweepReport{Version: holo.FormatVersion, Params: p, Points: points, Crossovers: cross})
			}
			return nil
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&nodesSpec, "nodes", "4:2048", "node counts: A:B (A, 2A, 4A, ... up to B, and B) or a comma-separated list; crossovers scan every N from the smallest to the largest")
	cmd.Flags().StringVar(&plotOut, "plot", "", "draw time against N per algorithm to this .svg or .png file")
	return cmd
}

// parseNodeList reads "A:B" (A doubling up to B, plus B) or "n1,n2,...", ascending, each in
// 2..holo.MaxNodes.
func parseNodeList(s string) ([]int, error) {
	var ns []int
	atoi := func(v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 2 || n > holo.MaxNodes {
			return 0, fmt.Errorf("%q is not a node count in 2..%d", v, holo.MaxNodes)
		}
		return n, nil
	}
	if lo, hi, ok := strings.Cut(s, ":"); ok {
		a, err := atoi(lo)
		if err != nil {
			return nil, err
		}
		b, err := atoi(hi)
		if err != nil {
			return nil, err
		}
		if b < a {
			return nil, fmt.Errorf("%d is below %d", b, a)
		}
		for n := a; n <= b; n *= 2 {
			ns = append(ns, n)
		}
		if ns[len(ns)-1] != b {
			ns = append(ns, b)
		}
		return ns, nil
	}
	for _, v := range strings.Split(s, ",") {
		n, err := atoi(v)
		if err != nil {
			return nil, err
		}
		if len(ns) > 0 && n <= ns[len(ns)-1] {
			return nil, fmt.Errorf("%d does not come after %d: list the counts in ascending order", n, ns[len(ns)-1])
		}
		ns = append(ns, n)
	}
	return ns, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
