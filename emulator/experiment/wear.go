package experiment

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Wear is one algorithm's switch state changes over every matrix of an Outcome (one inference
// pass of a trace): Tetris §5's switch-wear objective, per switch.
type Wear struct {
	Algorithm string
	// N and Fabric are the fabric's size and kind (of the algorithm's first record).
	N      int
	Fabric schedules.FabricKind
	// PerSwitch sums the records' per-switch counts, by stage then index.
	PerSwitch []emulator.SwitchCount
	// Total is the sum of PerSwitch, the records' StateChanges summed.
	Total int
	// Most is the most-changed switch (the first by stage and index on a tie); zero Count when
	// nothing changed.
	Most emulator.SwitchCount
}

// Wear sums each algorithm's per-switch counts over the records, algorithms in order of first
// appearance.
func (o *Outcome) Wear() []Wear {
	var ws []Wear
	at := map[string]int{}
	sums := []map[[2]int]int{}
	for _, r := range o.Records {
		k, ok := at[r.Algorithm]
		if !ok {
			k = len(ws)
			at[r.Algorithm] = k
			ws = append(ws, Wear{Algorithm: r.Algorithm, N: r.N, Fabric: r.Fabric})
			sums = append(sums, map[[2]int]int{})
		}
		for _, c := range r.StateChangesPerSwitch {
			sums[k][[2]int{c.Stage, c.Index}] += c.Count
			ws[k].Total += c.Count
		}
	}
	for k := range ws {
		for key, c := range sums[k] {
			ws[k].PerSwitch = append(ws[k].PerSwitch, emulator.SwitchCount{Stage: key[0], Index: key[1], Count: c})
		}
		sortCounts(ws[k].PerSwitch)
		ws[k].Most, _ = emulator.MostChanged(ws[k].PerSwitch)
	}
	return ws
}

func sortCounts(cs []emulator.SwitchCount) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && (cs[j].Stage < cs[j-1].Stage || cs[j].Stage == cs[j-1].Stage && cs[j].Index < cs[j-1].Index); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// Lifetime is how long the most-changed switch lasts, in seconds, when it is rated for cycles
// state changes and the pass runs passesPerSecond times a second; +Inf when nothing changes.
func (w Wear) Lifetime(cycles, passesPerSecond float64) float64 {
	if w.Most.Count == 0 || !(passesPerSecond > 0) {
		return math.Inf(1)
	}
	return cycles / (float64(w.Most.Count) * passesPerSecond)
}

// WriteWear prints, per algorithm, a heatmap of the changes (rows stages, columns switch
// indices, "." for none; on a crossbar one row of transmitters), the most-changed switch and its
// lifetime at passesPerSecond passes a second for a switch rated for cycles changes.
func WriteWear(w io.Writer, ws []Wear, cycles, passesPerSecond float64) error {
	for _, x := range ws {
		fmt.Fprintf(w, "switch state changes of %s (rows: stage, columns: switch index; %d in all)\n", x.Algorithm, x.Total)
		grid := map[[2]int]int{}
		for _, c := range x.PerSwitch {
			grid[[2]int{c.Stage, c.Index}] = c.Count
		}
		first, rows, cols, head := 0, 1, x.N, "tx"
		if x.Fabric != schedules.Crossbar {
			k := bits.Len(uint(max(x.N, 2) - 1))
			rows, cols, head = 2*k-1, max(x.N, 2)/2, "stage"
		} else {
			first = -1
		}
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
		cells := []string{head}
		for i := range cols {
			cells = append(cells, strconv.Itoa(i))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		for st := first; st < first+rows; st++ {
			cells = append(cells[:0], strconv.Itoa(st))
			if st < 0 {
				cells[0] = "-"
			}
			for i := range cols {
				if c := grid[[2]int{st, i}]; c > 0 {
					cells = append(cells, strconv.Itoa(c))
				} else {
					cells = append(cells, ".")
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, wearLine(x, cycles, passesPerSecond))
	}
	return nil
}

// wearLine is the one-line lifetime estimate of w.
func wearLine(w Wear, cycles, passesPerSecond float64) string {
	if w.Most.Count == 0 {
		return "no switch changes state: no wear"
	}
	name := fmt.Sprintf("switch %d:%d", w.Most.Stage, w.Most.Index)
	if w.Most.Stage < 0 {
		name = fmt.Sprintf("transmitter %d", w.Most.Index)
	}
	return fmt.Sprintf("%s changes %d times a pass; at %s passes/s it reaches %s cycles in %s",
		name, w.Most.Count, shortFloat(passesPerSecond), shortFloat(cycles),
		FormatLifetime(w.Lifetime(cycles, passesPerSecond)))
}

// FormatLifetime writes a duration in seconds in the largest unit that keeps it at least 1
// (seconds, minutes, hours, days, years of 365.25 days), to three significant figures.
func FormatLifetime(sec float64) string {
	if math.IsInf(sec, 1) {
		return "never"
	}
	units := []struct {
		name string
		s    float64
	}{{"years", 365.25 * 86400}, {"days", 86400}, {"hours", 3600}, {"minutes", 60}, {"seconds", 1}}
	for _, u := range units {
		if sec >= u.s || u.s == 1 {
			return strconv.FormatFloat(sec/u.s, 'g', 3, 64) + " " + u.name
		}
	}
	return ""
}

// shortFloat writes v as strconv's shortest 'g' form with a plain exponent: 1e9, not 1e+09.
func shortFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	s = strings.Replace(s, "e+0", "e", 1)
	s = strings.Replace(s, "e+", "e", 1)
	return strings.Replace(s, "e-0", "e-", 1)
}
