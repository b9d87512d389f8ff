package holo

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/internal/units"
)

// FormatVersion is the version of the JSON reports written by the broadcast commands.
const FormatVersion = 1

// Describe is the parameter header of every report: the model's inputs, derived values and the
// header-cost reading of the tree forms.
func Describe(p Params) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Er-El and Feitelson broadcast model: T_c = T_r + T_w = %s (T_r = %s serialised, T_w = %s overlapping), T_b = %s/B, T_f = %s/B, T_d = T_b − T_f = %s/B, S = %s\n",
		units.FormatSeconds(p.TC()), units.FormatSeconds(p.TR), units.FormatSeconds(p.TW),
		units.FormatSeconds(p.TB), units.FormatSeconds(p.TF), units.FormatSeconds(p.TD()), units.FormatBinary(p.Size))
	fmt.Fprintf(&b, "header H = %s: per-stage header cost H·T_d = %s, read into the tree forms' per-stage T_d (only the header goes up the stack to trigger the next change, §2.4)\n",
		units.FormatBinary(p.Header), units.FormatSeconds(p.HeaderCost()))
	if p.Nodes >= 2 {
		fmt.Fprintf(&b, "tree-in-ring k = ⌊(H·T_d + T_c)/(S·T_f)⌋ + 1 = %d at N = %d\n", p.K(), p.Nodes)
	}
	return b.String()
}

// difference prints simulated − closed form, "0" when they agree to rounding.
func difference(sim, cf float64) string {
	switch d := sim - cf; {
	case math.IsNaN(cf):
		return "—"
	case near(sim, cf):
		return "0"
	default:
		s := units.FormatSeconds(d)
		if d > 0 {
			s = "+" + s
		}
		return s
	}
}

// near is equality to floating-point rounding: the simulator adds one event at a time the terms
// that a closed form multiplies out.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

func fmtOpt(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "—"
	}
	return units.FormatSeconds(*v)
}

// WriteTable prints one line per point: simulated and closed-form time, their difference, the
// configuration changes, stack sends, FU forwards and stages, then a note per algorithm.
func WriteTable(w io.Writer, p Params, points []Point) error {
	if _, err := io.WriteString(w, Describe(p)+"\n"); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	tcHalf := len(points) > 0 && points[0].TcHalfSimulatedSeconds != nil
	fmt.Fprint(tw, "algorithm\tN\tsimulated\tclosed form\tsim − closed\tmodel form\tchanges\tstack sends\tFU forwards\tstages")
	if tcHalf {
		fmt.Fprint(tw, "\tT_c^0.5 sim\tT_c^0.5 closed")
	}
	fmt.Fprintln(tw)
	for _, pt := range points {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d", pt.Algorithm, pt.Nodes,
			units.FormatSeconds(pt.SimulatedSeconds), units.FormatSeconds(pt.ClosedFormSeconds),
			difference(pt.SimulatedSeconds, pt.ClosedFormSeconds), fmtOpt(pt.ModelFormSeconds),
			pt.ConfigChanges, pt.AppSends, pt.Forwards, pt.Stages)
		if tcHalf {
			fmt.Fprintf(tw, "\t%s\t%s", fmtOpt(pt.TcHalfSimulatedSeconds), fmtOpt(pt.TcHalfClosedSeconds))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nnotes (closed form: the paper's, Er-El and Feitelson §3.1; model form: this simulator's exact form):")
	seen := map[string]bool{}
	for _, pt := range points {
		if !seen[pt.Algorithm] {
			seen[pt.Algorithm] = true
			fmt.Fprintf(w, "  %s: %s\n", pt.Algorithm, pt.Note)
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteSweep prints the simulated times per N and algorithm, T_c^0.5 per N and algorithm
// (simulated / closed form), and the crossover table.
func WriteSweep(w io.Writer, p Params, algorithms []string, points []Point, crossovers []Crossover) error {
	if _, err := io.WriteString(w, Describe(Params{TR: p.TR, TW: p.TW, TB: p.TB, TF: p.TF, Size: p.Size, Header: p.Header})+"\n"); err != nil {
		return err
	}
	byN := map[int]map[string]Point{}
	var ns []int
	for _, pt := range points {
		if byN[pt.Nodes] == nil {
			byN[pt.Nodes] = map[string]Point{}
			ns = append(ns, pt.Nodes)
		}
		byN[pt.Nodes][pt.Algorithm] = pt
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "broadcast time, simulated (closed form; = where they agree to rounding)")
	fmt.Fprint(tw, "N\tk")
	for _, a := range algorithms {
		fmt.Fprintf(tw, "\t%s", a)
	}
	fmt.Fprintln(tw)
	for _, n := range ns {
		fmt.Fprintf(tw, "%d\t%d", n, withNodes(p, n).K())
		for _, a := range algorithms {
			pt := byN[n][a]
			cf := units.FormatSeconds(pt.ClosedFormSeconds)
			switch {
			case math.IsNaN(pt.ClosedFormSeconds):
				cf = "—"
			case near(pt.SimulatedSeconds, pt.ClosedFormSeconds):
				cf = "=" // equal to rounding; four digits of each could still differ at a ...5
			}
			fmt.Fprintf(tw, "\t%s (%s)", units.FormatSeconds(pt.SimulatedSeconds), cf)
		}
		fmt.Fprintln(tw)
	}
	if len(points) > 0 && points[0].TcHalfSimulatedSeconds != nil {
		fmt.Fprintln(tw, "\nT_c^0.5, the T_c (T_r = 0) at which the broadcast takes twice its T_c = 0 time (§3.3): simulated (closed form)")
		fmt.Fprint(tw, "N")
		for _, a := range algorithms {
			fmt.Fprintf(tw, "\t%s", a)
		}
		fmt.Fprintln(tw)
		for _, n := range ns {
			fmt.Fprintf(tw, "%d", n)
			for _, a := range algorithms {
				pt := byN[n][a]
				fmt.Fprintf(tw, "\t%s (%s)", fmtOpt(pt.TcHalfSimulatedSeconds), fmtOpt(pt.TcHalfClosedSeconds))
			}
			fmt.Fprintln(tw)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(crossovers) == 0 {
		return nil
	}
	c0 := crossovers[0]
	fmt.Fprintf(w, "\ncrossovers: where the ring is at least as fast as each tree (every N from %d to %d; Er-El and Feitelson §3.2)\n", c0.From, c0.To)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ring vs\tpaper's simplified inequality\tpaper\tclosed forms\tsimulated")
	for _, c := range crossovers {
		paper, below := "—", "—"
		if c.Paper != "" {
			paper, below = c.Paper, fmt.Sprintf("N < %d", c.PaperBelow)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Versus, paper, below, describeOvertake(c.Closed, c.From, c.To), describeOvertake(c.Simulated, c.From, c.To))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, `
The paper's inequalities drop T_c on the ring's side and T_d on the tree's and take T_c ≈ 10·S·T_f;
its "N < 10" is where lg N − 3.3 is negative, so dividing by it flips the inequality. The closed
and simulated columns keep every term, at the parameters above.`)
	return err
}

func withNodes(p Params, n int) Params { p.Nodes = n; return p }

// describeOvertake says where the ring is at least as fast: "N < 58", "N < 58, 65..68",
// "never", or "throughout".
func describeOvertake(o Overtake, from, to int) string {
	switch {
	case len(o.Ring) == 0:
		return "never"
	case o.First == 0:
		return fmt.Sprintf("throughout (N ≤ %d)", to)
	}
	var parts []string
	for i, r := range o.Ring {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("… (%d runs)", len(o.Ring)))
			break
		}
		switch {
		case i == 0 && r[0] == from:
			parts = append(parts, fmt.Sprintf("N < %d", r[1]+1))
		case r[1] == to:
			parts = append(parts, fmt.Sprintf("N ≥ %d", r[0]))
		case r[0] == r[1]:
			parts = append(parts, fmt.Sprint(r[0]))
		default:
			parts = append(parts, fmt.Sprintf("%d..%d", r[0], r[1]))
		}
	}
	return strings.Join(parts, ", ")
}
