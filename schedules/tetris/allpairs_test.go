package tetris

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// TestAllPairsEqualsQuery: the all-pairs programme gives exactly benes.Plan.Query's start for
// every pair, on plans built from random circuits (random paths, overlapping or not).
func TestAllPairsEqualsQuery(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		n := 1 << k
		f, err := benes.New(n)
		if err != nil {
			rt.Fatal(err)
		}
		p := benes.NewPlan(f, rapid.SampledFrom([]float64{0, 1, 2.5}).Draw(rt, "alpha"))
		a := newAllPairs(p)
		port := rapid.IntRange(0, n-1)
		circuits := rapid.IntRange(0, 3*n).Draw(rt, "circuits")
		for c := 0; c < circuits; c++ {
			src, dst := port.Draw(rt, "src"), port.Draw(rt, "dst")
			ch := rapid.Uint32Range(0, uint32(n/2)-1).Draw(rt, "choices")
			if n == 2 {
				ch = 0
			}
			start, _ := p.Start(src, dst, ch)
			start += float64(rapid.IntRange(0, 3).Draw(rt, "delay"))
			p.Commit(src, dst, ch, start, start+float64(rapid.IntRange(0, 9).Draw(rt, "length")))
		}
		a.refresh()
		for src := 0; src < n; src++ {
			for dst := 0; dst < n; dst++ {
				_, want, _ := p.Query(src, dst)
				if got := a.start(src, dst); got != want {
					rt.Fatalf("n=%d %d→%d: all-pairs start %g, Query %g", n, src, dst, got, want)
				}
			}
		}
	})
}

// TestRouterPartialStartEqualsPlan: the router's incremental partial-path readiness is
// Plan.PartialStart at every level, as routing descends.
func TestRouterPartialStartEqualsPlan(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(2, 6).Draw(rt, "k")
		n := 1 << k
		f, _ := benes.New(n)
		bp := newBenesPlan(f, rapid.SampledFrom([]float64{0, 1, 2.5}).Draw(rt, "alpha"))
		port := rapid.IntRange(0, n-1)
		paths := rapid.Uint32Range(0, uint32(n/2)-1)
		for c := rapid.IntRange(0, 3*n).Draw(rt, "circuits"); c > 0; c-- {
			src, dst, ch := port.Draw(rt, "src"), port.Draw(rt, "dst"), paths.Draw(rt, "choices")
			start, _ := bp.p.Start(src, dst, ch)
			bp.p.Commit(src, dst, ch, start, start+float64(rapid.IntRange(0, 9).Draw(rt, "length")))
		}
		bp.refresh()
		conns := []benes.Conn{{Src: port.Draw(rt, "a"), Dst: port.Draw(rt, "b")}, {Src: port.Draw(rt, "c"), Dst: port.Draw(rt, "d")}}
		final := []uint32{paths.Draw(rt, "p0"), paths.Draw(rt, "p1")}
		r := &router{}
		r.bind(bp, conns)
		choices := make([]uint32, 2)
		for level := 0; level < k-1; level++ {
			for i, cn := range conns {
				for c := uint32(0); c < 2; c++ {
					ch := choices[i] | c<<level
					if got, want := r.partialStart(i, ch, level, choices), bp.p.PartialStart(cn.Src, cn.Dst, ch, level); got != want {
						rt.Fatalf("level %d conn %v choices %b: router %g, Plan %g", level, cn, ch, got, want)
					}
				}
			}
			for i := range conns {
				choices[i] |= final[i] & (1 << level)
			}
		}
	})
}

// TestPathReadyHoldsThroughAMatching: the planner takes every circuit's start from the readiness
// table refreshed before its matching, though the circuits are committed one by one; committing
// the earlier circuits of a routed matching must not change Start for the later ones.
func TestPathReadyHoldsThroughAMatching(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		n := 1 << k
		f, err := benes.New(n)
		if err != nil {
			rt.Fatal(err)
		}
		p := benes.NewPlan(f, rapid.SampledFrom([]float64{0, 1, 2.5}).Draw(rt, "alpha"))
		a := newAllPairs(p)
		ports := make([]int, n)
		for i := range ports {
			ports[i] = i
		}
		for round := range rapid.IntRange(1, 4).Draw(rt, "rounds") {
			dsts := rapid.Permutation(ports).Draw(rt, "dsts")
			var conns []benes.Conn
			for src, dst := range dsts {
				if rapid.IntRange(0, 3).Draw(rt, "keep") > 0 {
					conns = append(conns, benes.Conn{Src: src, Dst: dst})
				}
			}
			var choose benes.Chooser
			if rapid.Bool().Draw(rt, "flips") {
				choose = func(benes.Component, []uint32) bool { return rapid.Bool().Draw(rt, "flip") }
			}
			choices, err := f.Route(conns, choose)
			if err != nil {
				rt.Fatal(err)
			}
			a.refresh()
			for i, cn := range conns {
				want, _ := p.Start(cn.Src, cn.Dst, choices[i])
				if got := a.pathReady(cn.Src, cn.Dst, choices[i]); got != want {
					rt.Fatalf("round %d, circuit %d (%d→%d): start %g from the refreshed table, %g from the plan", round, i, cn.Src, cn.Dst, got, want)
				}
				p.Commit(cn.Src, cn.Dst, choices[i], want, want+float64(rapid.IntRange(0, 9).Draw(rt, "length")))
			}
		}
	})
}
