package holo

import (
	"testing"

	"pgregory.net/rapid"
)

// genParams draws parameters over a wide range: a change from nothing to a thousand forwards,
// stacks from as fast as the FU to a thousand times slower, headers from none to the message.
func genParams(t *rapid.T) Params {
	tf := rapid.Float64Range(1e-9, 1e-6).Draw(t, "t_f")
	size := rapid.Int64Range(1, 4096).Draw(t, "size")
	p := Params{
		Nodes:  rapid.IntRange(2, 300).Draw(t, "nodes"),
		TW:     rapid.Float64Range(0, 1000).Draw(t, "t_w/S·T_f") * float64(size) * tf,
		TB:     tf * rapid.Float64Range(1, 1000).Draw(t, "t_b/t_f"),
		TF:     tf,
		Size:   size,
		Header: rapid.Int64Range(0, min(size, 64)).Draw(t, "header"),
	}
	if rapid.Bool().Draw(t, "t_r") {
		p.TR = rapid.Float64Range(0, 2).Draw(t, "t_r/S·T_f") * p.S() * tf
	}
	return p
}

// Over random N and parameters: every algorithm delivers to every node exactly once (Run fails
// otherwise) with N−1 configuration changes, none finishes before one change and one stack send,
// naive is its closed form, ring is while T_r ≤ S·T_f, and the tree is its model form at T_r = 0.
func TestPropertyBroadcasts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams(t)
		for _, a := range Algorithms {
			r, err := Simulate(a, p)
			if err != nil {
				t.Fatalf("%s %+v: %v", a, p, err)
			}
			if r.ConfigChanges != p.Nodes-1 {
				t.Fatalf("%s: %d changes, want %d", a, r.ConfigChanges, p.Nodes-1)
			}
			if floor := p.TC() + p.S()*p.TB; r.Seconds < floor*(1-1e-12) {
				t.Fatalf("%s: %.17g below T_c + S·T_b = %.17g", a, r.Seconds, floor)
			}
			if m, ok := ModelForm(a, p); ok && !near(r.Seconds, m) {
				t.Fatalf("%s %+v: simulated %.17g, model form %.17g", a, p, r.Seconds, m)
			}
		}
		if p.TR == 0 {
			if _, ok := ModelForm(Tree, p); !ok {
				t.Fatal("no tree model form at T_r = 0")
			}
		}
	})
}

// With T_r = 0 neither tree embedded in a ring is slower than the ring it starts from: a branch is
// made only where it lands no later than the chain would.
func TestPropertyTreeRingNotSlowerThanRing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams(t)
		p.TR = 0
		ring, err := Simulate(Ring, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{TreeRing, TreeRingAlt} {
			r, err := Simulate(a, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Seconds > ring.Seconds*(1+1e-12) {
				t.Fatalf("%s %+v (k = %d): %.17g, ring %.17g", a, p, p.K(), r.Seconds, ring.Seconds)
			}
		}
	})
}
