package experiment

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// BVariant is one demand of the varied tenant (nil Demand: idle).
type BVariant struct {
	Name   string
	Demand *schedules.Demand
}

// InterferenceSpec is the interference experiment (Tetris §5, multi-tenant isolation): tenant A's
// demand fixed, tenant B's varied over Variants, on an N-port fabric, under each allocation with
// every algorithm of Config.
type InterferenceSpec struct {
	N           int
	A           Tenant
	B           schedules.Block
	Variants    []BVariant
	Allocations []schedules.Allocation
	Config      Config
}

// Spread is the minimum, median and maximum of a completion over B's variants, in seconds.
type Spread struct {
	Min    float64 `json:"min_seconds"`
	Median float64 `json:"median_seconds"`
	Max    float64 `json:"max_seconds"`
}

func spreadOf(xs []float64) Spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Min: s[0], Median: m, Max: s[len(s)-1]}
}

// InterferenceRow is one algorithm under one allocation over every variant of B.
type InterferenceRow struct {
	Allocation schedules.Allocation `json:"allocation"`
	Algorithm  string               `json:"algorithm"`
	A          Spread               `json:"a"`
	B          Spread               `json:"b"` // over B's variants that are not idle
	Fabric     Spread               `json:"fabric"`
	// AIdle is A's completion with B idle (the first idle variant; 0 if none).
	AIdle float64 `json:"a_with_b_idle_seconds"`
	// Runs are the runs, one per variant.
	Runs []TenantRun `json:"runs"`
}

// Interference runs the spec: per allocation, per algorithm, every variant of B beside A.
func Interference(ctx context.Context, spec InterferenceSpec, progress func(done, total int)) ([]InterferenceRow, error) {
	if len(spec.Variants) == 0 {
		return nil, fmt.Errorf("experiment: interference needs at least one variant of tenant B")
	}
	var rows []InterferenceRow
	total, done := len(spec.Allocations)*len(spec.Variants), 0
	for _, alloc := range spec.Allocations {
		per := make([][]TenantRun, len(spec.Config.Algorithms))
		for _, v := range spec.Variants {
			b := Tenant{Ports: spec.B, Demand: v.Demand}
			runs, err := RunTenants(ctx, spec.N, []Tenant{spec.A, b}, alloc, spec.Config)
			if err != nil {
				return nil, fmt.Errorf("tenant B %s: %w", v.Name, err)
			}
			for k := range runs {
				per[k] = append(per[k], runs[k])
			}
			if done++; progress != nil {
				progress(done, total)
			}
		}
		for k, name := range spec.Config.Algorithms {
			row := InterferenceRow{Allocation: alloc, Algorithm: name, Runs: per[k]}
			var a, b, f []float64
			for i, r := range per[k] {
				a, f = append(a, r.Tenants[0].CompletionSeconds), append(f, r.CompletionSeconds)
				if spec.Variants[i].Demand == nil {
					if row.AIdle == 0 {
						row.AIdle = r.Tenants[0].CompletionSeconds
					}
					continue
				}
				b = append(b, r.Tenants[1].CompletionSeconds)
			}
			row.A, row.Fabric = spreadOf(a), spreadOf(f)
			if len(b) > 0 {
				row.B = spreadOf(b)
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// ScaledVariants are B's variants from a base demand: idle, the base times each scale (bytes
// rounded down, at least one where the base has any), and a seeded random demand of the base's
// total spread uniformly at random over the pairs (the diagonal left empty).
func ScaledVariants(base *schedules.Demand, scales []float64, seed uint64) []BVariant {
	vs := []BVariant{{Name: "idle"}}
	n := base.N()
	for _, k := range scales {
		d := schedules.NewDemand(n)
		for i := range n {
			for j := range n {
				if x := base.At(i, j); x > 0 {
					d.Bytes[i][j] = max(int64(float64(x)*k), 1)
				}
			}
		}
		vs = append(vs, BVariant{Name: fmt.Sprintf("x%g", k), Demand: d})
	}
	r := rand.New(rand.NewPCG(seed, 0x7e))
	d := schedules.NewDemand(n)
	w := make([]float64, n*n)
	sum := 0.0
	for i := range w {
		if i/n != i%n {
			w[i] = r.Float64()
			sum += w[i]
		}
	}
	if sum > 0 {
		for i := range w {
			d.Bytes[i/n][i%n] = int64(w[i] / sum * float64(base.Total()))
		}
	}
	return append(vs, BVariant{Name: fmt.Sprintf("random (seed %d)", seed), Demand: d})
}

// WriteInterferenceTable prints one line per allocation and algorithm: A's, B's and the
// fabric's completion (min / median / max over B's variants, ms) and the cost of isolation, A's
// completion with B idle over A's shared completion with B idle.
func WriteInterferenceTable(w io.Writer, rows []InterferenceRow) error {
	shared := map[string]float64{}
	for _, r := range rows {
		if r.Allocation == schedules.Shared {
			shared[r.Algorithm] = r.AIdle
		}
	}
	ms := func(s Spread) string { return fmt.Sprintf("%.4f / %.4f / %.4f", s.Min*1e3, s.Median*1e3, s.Max*1e3) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ALLOCATION\tALGORITHM\tA (ms, min/median/max)\tB (ms)\tFABRIC (ms)\tA SPREAD\tA B-IDLE / SHARED\t")
	for _, r := range rows {
		cost := "-"
		if s := shared[r.Algorithm]; s > 0 && r.AIdle > 0 {
			cost = fmt.Sprintf("%.4f", r.AIdle/s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f\t%s\t\n", r.Allocation, r.Algorithm, ms(r.A), ms(r.B), ms(r.Fabric), r.A.Max/r.A.Min, cost)
	}
	return tw.Flush()
}

// InterferencePlot draws, for one algorithm, A's and B's completions (min, median, max over B's
// variants) per allocation, in ms.
func InterferencePlot(w io.Writer, format string, rows []InterferenceRow, algorithm string) error {
	b := plot.Bars{Title: "tenant interference: " + algorithm, YLabel: "completion (ms)",
		Series: []string{"A min", "A median", "A max", "B median"}}
	b.Values = make([][]float64, 4)
	for _, r := range rows {
		if r.Algorithm != algorithm {
			continue
		}
		b.Groups = append(b.Groups, string(r.Allocation))
		for k, v := range []float64{r.A.Min, r.A.Median, r.A.Max, r.B.Median} {
			b.Values[k] = append(b.Values[k], v*1e3)
		}
	}
	return plot.BarChart(w, format, b)
}
