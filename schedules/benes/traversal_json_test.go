package benes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// A traversal that does not decode is a *TraversalError naming it and the offending value, with
// the offset within the traversal that encoding/json would give; the error keeps its own copy of
// the bytes (the decoder's buffer is reused); a path reports its traversal's error. Paths that
// decode but are not physical are kept as read, as before.
func TestTraversalError(t *testing.T) {
	for _, c := range []struct {
		in, want string
		off      int64
	}{
		{`[0, "x", 0, 1]`, `traversal [0, "x", 0, 1]: value "x" is a JSON string, want an integer (int)`, 7},
		{`[0, 1.5, 0, 1]`, `traversal [0, 1.5, 0, 1]: value 1.5 is not an integer (int)`, 7},
		{`[0, 0, 0]`, `traversal [0, 0, 0]: want 4 integers [stage, switch, in_lane, out_lane], got 3`, 0},
		{`null`, `traversal null: want 4 integers [stage, switch, in_lane, out_lane], not null`, 0},
		{`{"stage": 1}`, `traversal {"stage": 1}: a JSON object, want an array`, 1},
		{"[0,\n 0,\n \"1\", 0]", `traversal [0,0,"1",0]: value "1" is a JSON string, want an integer (int)`, 12},
		{`[0, 0, 0, ` + strings.Repeat("1", 60) + `]`, `traversal [0, 0, 0, 111111111111111111111111111...: value 1111111111111111111111111111111111111... is not an integer (int)`, 70},
	} {
		b := []byte(c.in)
		var tr Traversal
		err := tr.UnmarshalJSON(b)
		var te *TraversalError
		if !errors.As(err, &te) || err.Error() != c.want || te.Offset != c.off {
			t.Errorf("%q: %v (%#v), want %q at %d", c.in, err, te, c.want, c.off)
			continue
		}
		for i := range b {
			b[i] = ' '
		}
		if string(te.Value) != c.in {
			t.Errorf("%q: the error's value changed with the decoder's buffer: %q", c.in, te.Value)
		}
	}
	var p Path
	if err := json.Unmarshal([]byte(`[[0,0,0,0],[1,"x",0,1]]`), &p); err == nil || err.Error() != `traversal [1,"x",0,1]: value "x" is a JSON string, want an integer (int)` {
		t.Errorf("Path: %v", err)
	}
	if err := json.Unmarshal([]byte(`[[0,0,0,0],[-1,0,null,7]]`), &p); err != nil || p.Len() != 2 || p.At(1) != (Traversal{Stage: -1, Out: 7}) {
		t.Errorf("a broken path that decodes: %v, %v", p, err)
	}
}
