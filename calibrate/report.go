package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// WorstFits is how many pairs the report lists as the worst fits.
const WorstFits = 5

// WriteReport prints a calibration for people: where and how it was taken, then per pattern the
// α (µs) and bandwidth (GB/s, 10^9 bytes per second, of the largest sizes) of every pair as
// src × dst matrices, then the worst fits by maximum relative residual with their R², m* = α/β,
// the Theil–Sen cross-check, pieces and outliers, then the warnings.
func WriteReport(w io.Writer, c *model.Calibration) error {
	kind := "measured"
	if c.Inventory.Fake {
		kind = "fake devices"
	}
	if n, all := len(gpusOf(c)), len(c.Inventory.GPUs); n < all {
		fmt.Fprintf(w, "Calibration of %d of %d GPUs (%s)", n, all, kind)
	} else {
		fmt.Fprintf(w, "Calibration of %d GPUs (%s)", all, kind)
	}
	if c.Inventory.Host != "" {
		fmt.Fprintf(w, " on %s", c.Inventory.Host)
	}
	if c.Created != "" {
		fmt.Fprintf(w, ", finished %s", c.Created)
	}
	fmt.Fprintln(w)
	if p := c.Plan; p != nil {
		fmt.Fprintf(w, "Plan: %d pairs, %d sizes %s..%s, %d timed (+%d warm-up) %s copies per size, patterns %s, engine %s\n",
			len(p.Pairs), len(p.Sizes), units.FormatBinary(p.Sizes[0]), units.FormatBinary(p.Sizes[len(p.Sizes)-1]),
			p.Reps, p.Warmup, strings.ToUpper(p.Copy), strings.Join(p.Patterns, ", "), p.Engine)
	}
	gpus := gpusOf(c)
	for _, pat := range c.Patterns() {
		fmt.Fprintf(w, "\n%s: α (µs), rows src, columns dst\n", pat)
		if err := writeMatrix(w, c, pat, gpus, func(p model.PairFit) string { return fmt.Sprintf("%.2f", p.Alpha*1e6) }); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s: bandwidth (GB/s) of the largest sizes\n", pat)
		if err := writeMatrix(w, c, pat, gpus, func(p model.PairFit) string { return fmt.Sprintf("%.1f", bandwidth(p)/1e9) }); err != nil {
			return err
		}
	}
	if len(c.Pairs) > 0 {
		fmt.Fprintf(w, "\nWorst fits (by max relative residual):\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PAIR\tPATTERN\tMAX RESID\tR²\tα µs\tGB/s\tm*\tTHEIL-SEN α µs, GB/s\tPIECES\tOUTLIERS")
		worst := slices.Clone(c.Pairs)
		slices.SortStableFunc(worst, func(a, b model.PairFit) int { return cmpFloat(b.MaxRelResidual, a.MaxRelResidual) })
		for _, p := range worst[:min(WorstFits, len(worst))] {
			ts := "–"
			if p.TheilSen != nil && p.TheilSen.Beta > 0 {
				ts = fmt.Sprintf("%.2f, %.1f", p.TheilSen.Alpha*1e6, 1/p.TheilSen.Beta/1e9)
			}
			fmt.Fprintf(tw, "%d→%d\t%s\t%.2f%%\t%.5f\t%.2f\t%.1f\t%s\t%s\t%s\t%s\n", p.Src, p.Dst, p.PatternName(),
				100*p.MaxRelResidual, p.R2, p.Alpha*1e6, bandwidth(p)/1e9, units.FormatBytes(int64(math.Round(p.MStar))), ts,
				pieces(p), sizes(p.Outliers))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, warn := range c.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	return nil
}

func bandwidth(p model.PairFit) float64 {
	if p.Bandwidth > 0 {
		return p.Bandwidth
	}
	return 1 / p.Beta
}

func pieces(p model.PairFit) string {
	if len(p.Pieces) == 0 {
		return "1"
	}
	var parts []string
	for _, pc := range p.Pieces {
		parts = append(parts, fmt.Sprintf("%s..%s %.1f GB/s", units.FormatBytes(pc.MinBytes), units.FormatBytes(pc.MaxBytes), 1/pc.Beta/1e9))
	}
	return fmt.Sprintf("%d (knee at %s: %s)", len(p.Pieces), units.FormatBytes(p.Pieces[1].FromBytes), strings.Join(parts, "; "))
}

func sizes(bs []int64) string {
	if len(bs) == 0 {
		return "none"
	}
	var parts []string
	for _, b := range bs {
		parts = append(parts, units.FormatBytes(b))
	}
	return strings.Join(parts, ", ")
}

// gpusOf lists the GPUs any pair names, in order.
func gpusOf(c *model.Calibration) []int {
	seen := map[int]bool{}
	for _, p := range c.Pairs {
		seen[p.Src], seen[p.Dst] = true, true
	}
	var out []int
	for g := range seen {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

func writeMatrix(w io.Writer, c *model.Calibration, pattern string, gpus []int, cell func(model.PairFit) string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, d := range gpus {
		fmt.Fprintf(tw, "%d\t", d)
	}
	fmt.Fprintln(tw)
	idx := c.Index()
	for _, s := range gpus {
		fmt.Fprintf(tw, "%d\t", s)
		for _, d := range gpus {
			v := "–"
			if p, ok := idx.PairUnder(s, d, pattern); ok {
				v = cell(p)
			}
			fmt.Fprintf(tw, "%s\t", v)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
