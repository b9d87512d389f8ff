package benes

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// The fast path of Traversal.UnmarshalJSON agrees with the general one wherever it answers.
func TestParseTraversalAgreesWithJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "wellformed") {
			sp := func(l string) string { return rapid.SampledFrom([]string{"", " ", "\n  "}).Draw(t, l) }
			v := rapid.SliceOfN(rapid.IntRange(0, 2_000_000_000), 4, 4).Draw(t, "v")
			b = fmt.Appendf(nil, "%s[%s%d,%s%d%s,%d,%d%s]%s", sp("a"), sp("b"), v[0], sp("c"), v[1], sp("d"), v[2], v[3], sp("e"), sp("f"))
		} else {
			b = []byte(rapid.StringOf(rapid.RuneFrom([]rune("[]0123456789, -.e"))).Draw(t, "s"))
		}
		fast, ok := parseTraversal(b)
		var a []int
		err := json.Unmarshal(b, &a)
		if !ok {
			return
		}
		if err != nil || len(a) != 4 || fast != (Traversal{Stage: a[0], Switch: a[1], In: a[2], Out: a[3]}) {
			t.Fatalf("%q: fast %+v, json %v %v", b, fast, a, err)
		}
	})
	for _, s := range []string{"[0,0,0,1]", " [ 3 , 14 , 1 , 0 ] "} {
		if _, ok := parseTraversal([]byte(s)); !ok {
			t.Errorf("%q not on the fast path", s)
		}
	}
}
