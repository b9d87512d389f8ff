package tetris

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestCandRowEqualsGo: candidate building as the platform runs it (assembly on amd64) writes
// exactly the candidates, lists and graph words candRowGo writes, on rows drawn the way plans make
// them: served demands (bytes 0) among the live ones, W and start times often equal (ties of the
// key endpoint and costs exactly at b), receivers across several graph words, and the row written
// in place over itself or to an earlier position of the list.
func TestCandRowEqualsGo(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 300).Draw(rt, "n")
		words := (n + 63) / 64
		u := rapid.IntRange(0, n-1).Draw(rt, "u")
		pool := []float64{0, 1e-6, 10e-6, 2.5e-5, 1}
		time := func(name string) float64 {
			if rapid.Bool().Draw(rt, name+"-pooled") {
				return rapid.SampledFrom(pool).Draw(rt, name)
			}
			return rapid.Float64Range(0, 1e-3).Draw(rt, name)
		}
		// u's live demands, in increasing v, some already served.
		var src []candidate
		for v := range n {
			if rapid.IntRange(0, 3).Draw(rt, "has") > 0 {
				x := int64(0)
				if rapid.IntRange(0, 4).Draw(rt, "live") > 0 {
					x = rapid.Int64Range(1, 1<<40).Draw(rt, "bytes")
				}
				src = append(src, candidate{u: int32(u), v: int32(v), bytes: x, cost: -1})
			}
		}
		row := make([]uint64, n+rapid.IntRange(0, 3).Draw(rt, "pad"))
		for i := range row {
			row[i] = math.Float64bits(time("start"))
		}
		wRx := make([]float64, n)
		for i := range wRx {
			wRx[i] = time("w")
		}
		wu := time("wu")
		if len(wRx) > 0 && rapid.Bool().Draw(rt, "tie") {
			wu = wRx[rapid.IntRange(0, n-1).Draw(rt, "tied")]
		}
		alpha, b := rapid.SampledFrom(pool).Draw(rt, "alpha"), time("b")
		// Rooms: u's list from txFill, each receiver's from rxFill[v], apart in items.
		txFill := int32(rapid.IntRange(0, 5).Draw(rt, "txFill"))
		rxFill := make([]int32, n)
		next := txFill + int32(len(src))
		for v := range rxFill {
			rxFill[v] = next
			next++
		}
		items := make([]int32, next+2)
		for i := range items {
			items[i] = -7
		}
		txRow, rxCol := make([]uint64, words), make([]uint64, n*words)
		for i := range txRow {
			txRow[i] = rapid.Uint64().Draw(rt, "txRow") & rapid.SampledFrom([]uint64{0, ^uint64(0)}).Draw(rt, "txMask")
		}
		base := int32(rapid.IntRange(0, 1000).Draw(rt, "base"))
		// The list the row is written to: in place, or from an earlier position.
		shift := rapid.IntRange(0, 3).Draw(rt, "shift")
		list := make([]candidate, shift+len(src))
		copy(list[shift:], src)
		wantList := slices.Clone(list)
		wantItems, wantRxFill, wantTx, wantRx := slices.Clone(items), slices.Clone(rxFill), slices.Clone(txRow), slices.Clone(rxCol)
		uMask := uint64(1) << (uint(u) & 63)
		gotK, gotFill := candRow(list[shift:], list[:len(src)], row, wRx, items, rxFill, txRow, rxCol[u>>6:],
			words, uMask, int32(u), base, math.Float64bits(wu), txFill, alpha, b)
		wantK, wantFill := candRowGo(wantList[shift:], wantList[:len(src)], row, wRx, wantItems, wantRxFill, wantTx, wantRx[u>>6:],
			words, uMask, int32(u), base, math.Float64bits(wu), txFill, alpha, b)
		if gotK != wantK || gotFill != wantFill {
			rt.Fatalf("candRow wrote %d, fill %d; candRowGo %d, fill %d", gotK, gotFill, wantK, wantFill)
		}
		for i := range gotK {
			g, w := list[i], wantList[i]
			if g.u != w.u || g.v != w.v || g.bytes != w.bytes || math.Float64bits(g.cost) != math.Float64bits(w.cost) {
				rt.Fatalf("candidate %d: %+v, candRowGo %+v", i, g, w)
			}
		}
		if !slices.Equal(items, wantItems) || !slices.Equal(rxFill, wantRxFill) {
			rt.Fatalf("lists: items %v rxFill %v, candRowGo items %v rxFill %v", items, rxFill, wantItems, wantRxFill)
		}
		if !slices.Equal(txRow, wantTx) || !slices.Equal(rxCol, wantRx) {
			rt.Fatalf("graph: txRow %x rxCol %x, candRowGo txRow %x rxCol %x", txRow, rxCol, wantTx, wantRx)
		}
	})
}

// TestBestLiveEqualsGo: the walk's scan for a key endpoint's best live candidate as the platform
// runs it (assembly on amd64) picks exactly what bestLiveGo picks, with costs at and around h,
// equal byte counts (the earlier wins) and partners used or free, on both sides.
func TestBestLiveEqualsGo(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 64).Draw(rt, "n")
		cands := make([]candidate, rapid.IntRange(1, 200).Draw(rt, "cands"))
		costs := []float64{0, 1e-6, 2e-6, 3e-6}
		for i := range cands {
			cands[i] = candidate{
				u: int32(rapid.IntRange(0, n-1).Draw(rt, "u")), v: int32(rapid.IntRange(0, n-1).Draw(rt, "v")),
				bytes: rapid.Int64Range(1, 5).Draw(rt, "bytes"), cost: rapid.SampledFrom(costs).Draw(rt, "cost"),
			}
		}
		list := rapid.SliceOf(rapid.Int32Range(0, int32(len(cands)-1))).Draw(rt, "list")
		slices.Sort(list)
		usedTx, usedRx := make([]bool, n), make([]bool, n)
		for e := range n {
			usedTx[e], usedRx[e] = rapid.Bool().Draw(rt, "usedTx"), rapid.Bool().Draw(rt, "usedRx")
		}
		h := rapid.SampledFrom(costs).Draw(rt, "h")
		tx := rapid.Bool().Draw(rt, "tx")
		if got, want := bestLive(cands, list, h, tx, usedTx, usedRx), bestLiveGo(cands, list, h, tx, usedTx, usedRx); got != want {
			rt.Fatalf("bestLive = %d, bestLiveGo = %d", got, want)
		}
	})
}
