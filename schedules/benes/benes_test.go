package benes

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

func TestEveryChoiceGivesADistinctPhysicalPath(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16, 64} {
		f, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		for src := 0; src < n; src++ {
			for dst := 0; dst < n; dst++ {
				seen := map[string]bool{}
				for c := uint32(0); c < uint32(n/2); c++ {
					p := f.PathFrom(src, dst, c)
					if err := f.CheckPath(src, dst, PathOf(p)); err != nil {
						t.Fatalf("n=%d %d->%d choices %b: %v", n, src, dst, c, err)
					}
					// The wire-by-wire check, which compact paths skip, agrees.
					if err := f.CheckPath(src, dst, rawPath(p)); err != nil {
						t.Fatalf("n=%d %d->%d choices %b, hop by hop: %v", n, src, dst, c, err)
					}
					if got := f.Choices(p); got != c {
						t.Fatalf("Choices = %b, want %b", got, c)
					}
					key := fmt.Sprint(p)
					if seen[key] {
						t.Fatalf("n=%d %d->%d: duplicate path %v", n, src, dst, p)
					}
					seen[key] = true
				}
			}
		}
	}
}

// The 4-port network written out by hand from the wiring convention: stage 0 switches 0 and 1,
// middle stage switches 0 (upper child) and 1 (lower child), stage 2 switches 0 and 1.
func TestFourPortWiringByHand(t *testing.T) {
	f, _ := New(4)
	cases := []struct {
		stage, sw, out            int
		wantStage, wantSw, wantIn int
	}{
		{0, 0, 0, 1, 0, 0}, // input switch 0 lane 0 -> upper child local port 0 -> middle sw 0 lane 0
		{0, 0, 1, 1, 1, 0}, // lane 1 -> lower child local port 0 -> middle sw 1 lane 0
		{0, 1, 0, 1, 0, 1}, // input switch 1 lane 0 -> upper child local port 1 -> lane 1
		{0, 1, 1, 1, 1, 1},
		{1, 0, 0, 2, 0, 0}, // upper child output port 0 -> output switch 0 lane 0
		{1, 0, 1, 2, 1, 0}, // upper child output port 1 -> output switch 1 lane 0
		{1, 1, 0, 2, 0, 1}, // lower child output port 0 -> output switch 0 lane 1
		{1, 1, 1, 2, 1, 1},
		{2, 1, 1, 3, 3, 0}, // output switch 1 lane 1 -> output port 3
	}
	for _, c := range cases {
		s, w, in := f.Next(c.stage, c.sw, c.out)
		if s != c.wantStage || w != c.wantSw || in != c.wantIn {
			t.Errorf("Next(%d,%d,%d) = (%d,%d,%d), want (%d,%d,%d)", c.stage, c.sw, c.out, s, w, in, c.wantStage, c.wantSw, c.wantIn)
		}
	}
}

// allBar reports whether every traversal of p keeps its lane (the switch in Bar).
func allBar(p []Traversal) bool {
	for _, h := range p {
		if h.In != h.Out {
			return false
		}
	}
	return true
}

// TestAllBarConnectsEachPortToItself is the fact the reconfiguration-aware lower bound rests on
// (schedules.LowerBound): with every switch in Bar, the state all switches start in, no path
// joins two different ports, so every circuit between distinct ports waits for a switch change.
// Exhaustive for n ≤ 64: every ordered pair, every one of its n/2 paths. The one all-Bar path
// from a port to itself exists and is unique.
func TestAllBarConnectsEachPortToItself(t *testing.T) {
	for n := 2; n <= 64; n *= 2 {
		f, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		for src := range n {
			for dst := range n {
				bar := 0
				for c := uint32(0); c < uint32(n/2); c++ {
					if allBar(f.PathFrom(src, dst, c)) {
						if src != dst {
							t.Fatalf("n=%d: path %d->%d with choices %b is all Bar", n, src, dst, c)
						}
						bar++
					}
				}
				if src == dst && bar != 1 {
					t.Fatalf("n=%d: %d all-Bar paths from %d to itself, want 1", n, bar, src)
				}
			}
		}
	}
}

// TestAllBarPropertyLargeFabrics: the same fact beyond the exhaustive range, on random pairs and
// random paths of fabrics from 128 to 2^20 ports; the all-Bar choices of a port to itself are
// checked too, since they are what the argument says the identity follows.
func TestAllBarPropertyLargeFabrics(t *testing.T) {
	fabrics := map[int]*Fabric{}
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(7, 20).Draw(t, "log2 n")
		n := 1 << k
		f := fabrics[n]
		if f == nil {
			var err error
			if f, err = New(n); err != nil {
				t.Fatal(err)
			}
			fabrics[n] = f
		}
		src := rapid.IntRange(0, n-1).Draw(t, "src")
		dst := rapid.IntRange(0, n-1).Draw(t, "dst")
		c := rapid.Uint32Range(0, uint32(n/2-1)).Draw(t, "choices")
		if src != dst && allBar(f.PathFrom(src, dst, c)) {
			t.Fatalf("n=%d: path %d->%d with choices %b is all Bar", n, src, dst, c)
		}
		// Port src's own all-Bar path: at level s it enters the child its bit s names.
		self := uint32(0)
		for s := 0; s < k-1; s++ {
			self |= uint32((src>>s)&1) << s
		}
		if !allBar(f.PathFrom(src, src, self)) {
			t.Fatalf("n=%d: the identity path of %d (choices %b) is not all Bar", n, src, self)
		}
	})
}

// TestTraversalMarshalJSON: the array form, for the values a path holds and for the out-of-range
// ones a faulty producer could write (the verifier must see them as written).
func TestTraversalMarshalJSON(t *testing.T) {
	cases := []struct {
		t    Traversal
		want string
	}{
		{Traversal{0, 0, 0, 0}, "[0,0,0,0]"},
		{Traversal{16, 255, 1, 0}, "[16,255,1,0]"},
		{Traversal{38, 524287, 0, 1}, "[38,524287,0,1]"},
		{Traversal{-1, -20, 2, -3}, "[-1,-20,2,-3]"},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.t)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%+v marshals to %s, want %s", c.t, b, c.want)
		}
		var back Traversal
		if err := json.Unmarshal(b, &back); err != nil || back != c.t {
			t.Errorf("%s reads back as %+v (%v)", b, back, err)
		}
	}
}
