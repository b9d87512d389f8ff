package tetris

import (
	"bytes"
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// TestRoutedStartsArePathStarts: the start step 7 takes from routing (router.starts, read by
// benesPlan.start) is, for every connection of a routed matching, Start(S, p) of the path routing
// chose, as Plan.Start computes it.
func TestRoutedStartsArePathStarts(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		n := 1 << k
		f, err := benes.New(n)
		if err != nil {
			rt.Fatal(err)
		}
		bp := newBenesPlan(f, rapid.SampledFrom([]float64{0, 1, 2.5}).Draw(rt, "alpha"))
		r := &router{n: n, alpha: bp.p.AlphaR(), w: make([]float64, 2*n)}
		ports := make([]int, n)
		for i := range ports {
			ports[i] = i
		}
		for round := range rapid.IntRange(1, 5).Draw(rt, "rounds") {
			for e := range r.w {
				r.w[e] = float64(rapid.IntRange(0, 3).Draw(rt, "w"))
			}
			dsts := rapid.Permutation(ports).Draw(rt, "dsts")
			var conns []benes.Conn
			for src, dst := range dsts {
				if rapid.IntRange(0, 3).Draw(rt, "keep") > 0 {
					conns = append(conns, benes.Conn{Src: src, Dst: dst})
				}
			}
			bp.refresh()
			choices, err := bp.route(conns, r)
			if err != nil {
				rt.Fatal(err)
			}
			if k > 1 && bp.starts == nil {
				rt.Fatalf("round %d: routing left no starts", round)
			}
			for i, cn := range conns {
				want, _ := bp.p.Start(cn.Src, cn.Dst, choices[i])
				if got := bp.start(i, cn.Src, cn.Dst, choices[i]); got != want {
					rt.Fatalf("round %d, circuit %d (%d→%d, choices %b): start %g from routing, %g from the plan", round, i, cn.Src, cn.Dst, choices[i], got, want)
				}
				bp.commit(cn.Src, cn.Dst, choices[i], want, want+float64(rapid.IntRange(0, 3).Draw(rt, "length")))
			}
		}
	})
}

// TestRoutedStartsPlanAsReference: the planner that takes circuit starts from routing writes the
// same schedule file, byte for byte, as the reference planner that computes each from its whole
// path, on random demands whose sizes are drawn from two or three values so that weights,
// W and costs tie often (the corpus's MoE demands rarely tie), under every ablation and fabric, with and without the wear term.
func TestRoutedStartsPlanAsReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 20).Draw(rt, "n")
		sizes := rapid.SliceOfN(rapid.Int64Range(1, 4), 1, 3).Draw(rt, "sizes")
		empty := rapid.IntRange(0, 8).Draw(rt, "empty") // in tenths
		d := schedules.NewDemand(n)
		for i := range n {
			for j := range n {
				if i != j && rapid.IntRange(0, 9).Draw(rt, "gap") >= empty {
					d.Bytes[i][j] = 4096 * rapid.SampledFrom(sizes).Draw(rt, "size")
				}
			}
		}
		if d.Bytes[0][n-1] == 0 {
			d.Bytes[0][n-1] = 4096 // never an empty demand
		}
		o := schedules.Options{
			Bandwidth:        100e9,
			Reconfig:         rapid.SampledFrom([]float64{0, 10e-9, 40.96e-9, 10e-6}).Draw(rt, "alpha"),
			NoPartial:        rapid.Bool().Draw(rt, "noPartial"),
			NaiveRouting:     rapid.Bool().Draw(rt, "naive"),
			NoDegreeCoverage: rapid.IntRange(0, 3).Draw(rt, "noCoverage") == 0,
			// The wear term adds charges to routing's costs, never to the starts it keeps.
			WearWeight: rapid.SampledFrom([]float64{0, 0, 1}).Draw(rt, "wear"),
		}
		if rapid.IntRange(0, 4).Draw(rt, "crossbar") == 0 {
			o.Fabric = schedules.Crossbar
		}
		got, err := planReference(context.Background(), d, o, nil, nil, false)
		if err != nil {
			rt.Fatal(err)
		}
		want, err := planReference(context.Background(), d, o, nil, nil, true)
		if err != nil {
			rt.Fatal(err)
		}
		gb, err := encodeSchedule(got)
		if err != nil {
			rt.Fatal(err)
		}
		wb, err := encodeSchedule(want)
		if err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(gb, wb) {
			rt.Fatalf("starts from routing and from the paths differ: %s", firstDifference(gb, wb))
		}
	})
}
