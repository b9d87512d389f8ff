package benes

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// rawPath is ts kept hop by hop even when it is canonical, to compare the compact code paths
// with the plain ones.
func rawPath(ts []Traversal) Path { return Path{raw: &ts} }

// drawPath draws a fabric size and a physical path on it.
func drawPath(t *rapid.T) (f *Fabric, src, dst int, choices uint32) {
	k := rapid.IntRange(1, 20).Draw(t, "k")
	f, err := New(1 << k)
	if err != nil {
		t.Fatal(err)
	}
	src = rapid.IntRange(0, f.n-1).Draw(t, "src")
	dst = rapid.IntRange(0, f.n-1).Draw(t, "dst")
	choices = rapid.Uint32().Draw(t, "choices")
	return f, src, dst, choices
}

// A compact path is the path PathFrom builds, traversal by traversal, whichever way it is read.
func TestNewPathMatchesPathFrom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f, src, dst, choices := drawPath(t)
		want := f.PathFrom(src, dst, choices)
		p := f.NewPath(src, dst, choices)
		if got := p.AppendTo(nil); !slices.Equal(got, want) {
			t.Fatalf("AppendTo = %v, want %v", got, want)
		}
		if p.Len() != len(want) {
			t.Fatalf("Len = %d, want %d", p.Len(), len(want))
		}
		for i, tr := range p.All() {
			if tr != want[i] || p.At(i) != want[i] {
				t.Fatalf("traversal %d: All %v, At %v, want %v", i, tr, p.At(i), want[i])
			}
		}
		s, d, c, k, ok := p.Compact()
		if !ok || s != src || d != dst || k != f.k || c != f.Choices(want) {
			t.Fatalf("Compact = %d %d %b %d %v, want %d %d %b %d", s, d, c, k, ok, src, dst, f.Choices(want), f.k)
		}
		if q := PathOf(want); q != p {
			t.Fatalf("PathOf(PathFrom) = %#v, NewPath %#v: a physical path is not compressed", q, p)
		}
		if err := f.CheckPath(src, dst, p); err != nil {
			t.Fatal(err)
		}
	})
}

// drawHops draws hop lists of every kind: absent, empty, physical paths, physical paths with one
// field changed, and lists of arbitrary traversals.
func drawHops(t *rapid.T) []Traversal {
	switch rapid.IntRange(0, 4).Draw(t, "kind") {
	case 0:
		return nil
	case 1:
		return []Traversal{}
	case 2:
		f, src, dst, choices := drawPath(t)
		return f.PathFrom(src, dst, choices)
	case 3:
		f, src, dst, choices := drawPath(t)
		p := f.PathFrom(src, dst, choices)
		h := rapid.IntRange(0, len(p)-1).Draw(t, "hop")
		v := rapid.IntRange(-2, 1<<20).Draw(t, "value")
		switch rapid.IntRange(0, 4).Draw(t, "field") {
		case 0:
			p[h].Stage = v
		case 1:
			p[h].Switch = v
		case 2:
			p[h].In = v
		case 3:
			p[h].Out = v
		case 4:
			p = p[:h]
		}
		return p
	}
	small := rapid.IntRange(-1, 3)
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Traversal {
		return Traversal{Stage: small.Draw(t, "stage"), Switch: small.Draw(t, "switch"), In: small.Draw(t, "in"), Out: small.Draw(t, "out")}
	}), 0, 9).Draw(t, "hops")
}

// Any hop list survives PathOf: the same traversals, the same JSON bytes as []Traversal gives,
// the same null/[] distinction, and back through UnmarshalJSON.
func TestPathOfRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hops := drawHops(t)
		p := PathOf(hops)
		if got := p.Traversals(); !slices.Equal(got, hops) || (got == nil) != (hops == nil) {
			t.Fatalf("Traversals = %#v, want %#v", got, hops)
		}
		if got := p.AppendTo([]Traversal{{Stage: -9}}); !slices.Equal(got[1:], hops) || got[0].Stage != -9 {
			t.Fatalf("AppendTo = %v, want [{-9 0 0 0}] + %v", got, hops)
		}
		if p.Len() != len(hops) || p.IsNil() != (hops == nil) {
			t.Fatalf("Len %d IsNil %v for %#v", p.Len(), p.IsNil(), hops)
		}
		want, err := json.Marshal(hops)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(p)
		if err != nil || string(got) != string(want) {
			t.Fatalf("MarshalJSON = %s %v, want %s", got, err, want)
		}
		indented, _ := json.MarshalIndent(struct{ P Path }{p}, "", " ")
		wantIndented, _ := json.MarshalIndent(struct{ P []Traversal }{hops}, "", " ")
		if string(indented) != string(wantIndented) {
			t.Fatalf("MarshalIndent = %s, want %s", indented, wantIndented)
		}
		var back Path
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		if !back.Equal(p) || back.IsNil() != p.IsNil() || back.Len() != p.Len() {
			t.Fatalf("UnmarshalJSON(%s) = %v, want %v", want, back, p)
		}
		if fmt.Sprint(p) != fmt.Sprint(hops) || fmt.Sprintf("%+v", p) != fmt.Sprintf("%+v", hops) {
			t.Fatalf("printed %v, want %v", p, hops)
		}
		if len(hops) > 0 {
			hops[0].Stage = 99 // PathOf copied what it kept
			if p.At(0).Stage == 99 {
				t.Fatal("PathOf kept the caller's slice")
			}
		}
	})
}

// CheckPath says the same about a path in either form, so the compact fast path hides nothing.
func TestCheckPathCompactAgreesWithHopByHop(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hops := drawHops(t)
		f, err := New(1 << rapid.IntRange(1, 6).Draw(t, "fabric k"))
		if err != nil {
			t.Fatal(err)
		}
		src := rapid.IntRange(-1, f.n).Draw(t, "src")
		dst := rapid.IntRange(-1, f.n).Draw(t, "dst")
		if len(hops) > 0 && rapid.Bool().Draw(t, "own ports") {
			// Mostly the path's own ports, so the compact path is often right.
			src, dst = 2*hops[0].Switch+hops[0].In, 2*hops[len(hops)-1].Switch+hops[len(hops)-1].Out
		}
		fast, slow := f.CheckPath(src, dst, PathOf(hops)), f.CheckPath(src, dst, rawPath(hops))
		if fmt.Sprint(fast) != fmt.Sprint(slow) {
			t.Fatalf("%d->%d %v on n=%d: compact %v, hop by hop %v", src, dst, hops, f.n, fast, slow)
		}
	})
}

func TestCheckPathErrors(t *testing.T) {
	f, err := New(8)
	if err != nil {
		t.Fatal(err)
	}
	good := f.PathFrom(1, 6, 0b10)
	edit := func(fn func(p []Traversal) []Traversal) Path { return PathOf(fn(slices.Clone(good))) }
	for _, c := range []struct {
		name     string
		src, dst int
		p        Path
		want     string
	}{
		{"valid", 1, 6, f.NewPath(1, 6, 0b10), ""},
		{"valid, hop by hop", 1, 6, rawPath(good), ""},
		{"port out of range", 8, 6, f.NewPath(1, 6, 0b10), "port out of range: src 8, dst 6 on a 8-port fabric"},
		{"absent", 1, 6, Path{}, "path has 0 traversals, a 8-port Beneš path has 5"},
		{"empty", 1, 6, EmptyPath(), "path has 0 traversals, a 8-port Beneš path has 5"},
		{"another fabric's", 1, 2, mustNew(t, 4).NewPath(1, 2, 1), "path has 3 traversals, a 8-port Beneš path has 5"},
		{"another circuit's", 0, 6, f.NewPath(1, 6, 0b10), "traversal 0 is [0,0,1,0], the wiring leads to stage 0 switch 0 lane 0"},
		{"ends elsewhere", 1, 7, f.NewPath(1, 6, 0b10), "path from 1 ends at output port 6, not 7"},
		{"broken wire", 1, 6, edit(func(p []Traversal) []Traversal { p[2].Switch ^= 1; return p }), "traversal 2 is [2,0,0,1], the wiring leads to stage 2 switch 1 lane 0"},
		{"bad lane", 1, 6, edit(func(p []Traversal) []Traversal { p[4].Out = 2; return p }), "traversal 4 has out-lane 2 (lanes are 0 and 1)"},
		{"too short", 1, 6, edit(func(p []Traversal) []Traversal { return p[:2] }), "path has 2 traversals, a 8-port Beneš path has 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := f.CheckPath(c.src, c.dst, c.p)
			if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
				t.Errorf("CheckPath = %v, want %q", err, c.want)
			}
		})
	}
}

func mustNew(t *testing.T, n int) *Fabric {
	t.Helper()
	f, err := New(n)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The point of Path: 16 bytes in a circuit, no allocation to build or read one.
func TestPathIsSmallAndDoesNotAllocate(t *testing.T) {
	if size := unsafe.Sizeof(Path{}); size != 16 {
		t.Errorf("a Path is %d bytes, want 16", size)
	}
	f := mustNew(t, 1<<20)
	var p Path
	sum := 0
	allocs := testing.AllocsPerRun(100, func() {
		p = f.NewPath(12345, 67890, 0x5a5a5)
		for _, tr := range p.All() {
			sum += tr.Switch
		}
		sum += p.At(3).Switch + p.Len()
	})
	if allocs != 0 {
		t.Errorf("NewPath and reading it allocate %v times", allocs)
	}
	var buf [MaxStages]Traversal
	if allocs := testing.AllocsPerRun(100, func() { sum += len(p.AppendTo(buf[:0])) }); allocs != 0 {
		t.Errorf("AppendTo into a buffer allocates %v times", allocs)
	}
	hops := f.PathFrom(12345, 67890, 0x5a5a5)
	for name, fn := range map[string]func([]Traversal) Path{"PathOf": PathOf, "FromOwned": FromOwned} {
		if allocs := testing.AllocsPerRun(100, func() { p = fn(hops) }); allocs != 0 {
			t.Errorf("%s of a physical path allocates %v times", name, allocs)
		}
	}
	if sum == 0 {
		t.Error("nothing was read")
	}
}

// A path of the largest fabric still fits: 20 levels, ports up to 2^20−1, 19 choice bits.
func TestPathLargestFabric(t *testing.T) {
	f := mustNew(t, MaxPorts)
	src, dst, choices := MaxPorts-1, MaxPorts-2, uint32(1<<19-1)
	p := f.NewPath(src, dst, choices)
	if got, want := p.AppendTo(nil), f.PathFrom(src, dst, choices); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if s, d, c, k, ok := p.Compact(); !ok || s != src || d != dst || c != choices || k != 20 {
		t.Fatalf("Compact = %d %d %b %d %v", s, d, c, k, ok)
	}
}

// Out-of-range ports make no physical path; NewPath keeps what PathFrom gives.
func TestNewPathOutOfRangeKeepsHops(t *testing.T) {
	f := mustNew(t, 8)
	for _, c := range [][2]int{{8, 0}, {0, 8}, {-1, 3}, {3, -2}} {
		p := f.NewPath(c[0], c[1], 1)
		if _, _, _, _, ok := p.Compact(); ok {
			t.Errorf("%v: compact", c)
		}
		if got, want := p.AppendTo(nil), f.PathFrom(c[0], c[1], 1); !slices.Equal(got, want) {
			t.Errorf("%v: got %v, want %v", c, got, want)
		}
	}
}
