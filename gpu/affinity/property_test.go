package affinity

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func genSet(t *rapid.T, label string) Set {
	return Of(rapid.SliceOfN(rapid.IntRange(0, 300), 0, 64).Draw(t, label)...)
}

// String and Parse are inverses, and the list form is canonical (sorted, ranges maximal).
func TestPropertyListRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSet(t, "s")
		back, err := Parse(s.String())
		if err != nil || !back.Equal(s) {
			t.Fatalf("Parse(%q) = %v, %v; want %v", s.String(), back, err, s)
		}
		if back.String() != s.String() {
			t.Fatalf("not canonical: %q vs %q", back.String(), s.String())
		}
	})
}

func TestPropertyMaskRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSet(t, "s")
		bits := rapid.SampledFrom([]int{8, 32, 64}).Draw(t, "bits")
		if got := FromMask(s.Mask(bits), bits); !got.Equal(s) {
			t.Fatalf("FromMask(Mask(%v), %d) = %v", s, bits, got)
		}
	})
}

// Intersect is the set intersection: exactly the CPUs in both.
func TestPropertyIntersect(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genSet(t, "a"), genSet(t, "b")
		got := a.Intersect(b)
		for c := 0; c <= 300; c++ {
			want := slices.Contains(a, c) && slices.Contains(b, c)
			if slices.Contains(got, c) != want {
				t.Fatalf("%v ∩ %v = %v: cpu %d wrong", a, b, got, c)
			}
		}
		if !got.Equal(b.Intersect(a)) {
			t.Fatalf("intersection not symmetric")
		}
	})
}
