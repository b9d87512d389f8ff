package benes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

// checker validates a routing against the definition of a conflict-free Beneš configuration: every
// path is physical (CheckPath), no input lane or output lane of any switch carries two
// connections, and so no switch is used in two states: on a 2×2 switch, two connections on
// distinct input lanes and distinct output lanes are either both straight (bar) or both crossed.
// It keeps dense scratch arrays so that the exhaustive tests stay fast.
type checker struct {
	f             *Fabric
	inUse, outUse []int
	path          []Traversal
	touched       []int
}

func newChecker(f *Fabric) *checker {
	c := &checker{
		f:      f,
		inUse:  make([]int, f.NumLanes()),
		outUse: make([]int, f.NumLanes()),
		path:   make([]Traversal, f.Stages()),
	}
	for i := range c.inUse {
		c.inUse[i], c.outUse[i] = -1, -1
	}
	return c
}

func (c *checker) check(conns []Conn, choices []uint32) error {
	f := c.f
	defer c.clean()
	if len(choices) != len(conns) {
		return fmt.Errorf("%d choices for %d connections", len(choices), len(conns))
	}
	for i, cn := range conns {
		if choices[i] >= uint32(f.n/2) && f.n > 2 || f.n == 2 && choices[i] != 0 {
			return fmt.Errorf("connection %d (%d->%d): choices %b has bits above level k-2", i, cn.Src, cn.Dst, choices[i])
		}
		f.fillPath(c.path, cn.Src, cn.Dst, choices[i])
		if err := f.CheckPath(cn.Src, cn.Dst, PathOf(c.path)); err != nil {
			return fmt.Errorf("connection %d (%d->%d): %w", i, cn.Src, cn.Dst, err)
		}
		for _, t := range c.path {
			id := f.SwitchID(t.Stage, t.Switch)
			li, lo := f.LaneID(t.Stage, t.Switch, t.In), f.LaneID(t.Stage, t.Switch, t.Out)
			c.touched = append(c.touched, id)
			if j := c.inUse[li]; j >= 0 {
				return fmt.Errorf("connections %d and %d both enter stage %d switch %d on lane %d", j, i, t.Stage, t.Switch, t.In)
			}
			if j := c.outUse[lo]; j >= 0 {
				return fmt.Errorf("connections %d and %d both leave stage %d switch %d on lane %d", j, i, t.Stage, t.Switch, t.Out)
			}
			c.inUse[li], c.outUse[lo] = i, i
		}
	}
	return nil
}

func (c *checker) clean() {
	for _, id := range c.touched {
		c.inUse[2*id], c.inUse[2*id+1], c.outUse[2*id], c.outUse[2*id+1] = -1, -1, -1, -1
	}
	c.touched = c.touched[:0]
}

// The checker itself must reject what it is meant to catch, or the exhaustive tests prove nothing.
func TestCheckerRejectsConflicts(t *testing.T) {
	f, _ := New(4)
	c := newChecker(f)
	cases := []struct {
		name    string
		conns   []Conn
		choices []uint32
		want    string
	}{
		// 0->0 and 1->1 both upper: input switch 0 sends both out on lane 0.
		{"shared output lane", []Conn{{0, 0}, {1, 1}}, []uint32{0, 0}, "both leave stage 0 switch 0"},
		// Both reach the upper middle switch and leave it on lane 0 towards output switch 0.
		{"shared middle lane", []Conn{{0, 0}, {2, 1}}, []uint32{0, 0}, "both leave stage 1 switch 0"},
		{"shared input lane", []Conn{{0, 0}, {0, 3}}, []uint32{0, 1}, "both enter stage 0 switch 0 on lane 0"},
		// 2->2 lower and 3->3 upper cross input switch 1, bar their middle switches and cross
		// output switch 1.
		{"valid crossing", []Conn{{2, 2}, {3, 3}}, []uint32{1, 0}, ""},
		{"valid", []Conn{{2, 2}, {3, 3}}, []uint32{0, 1}, ""},
		{"wrong count", []Conn{{0, 0}}, nil, "0 choices for 1"},
	}
	for _, tc := range cases {
		err := c.check(tc.conns, tc.choices)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// permutations calls fn with every permutation of 0..n-1 (Heap's algorithm); fn must not keep p.
func permutations(n int, fn func(p []int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	c := make([]int, n)
	fn(p)
	for i := 0; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				p[0], p[i] = p[i], p[0]
			} else {
				p[c[i]], p[i] = p[i], p[c[i]]
			}
			fn(p)
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
}

// partialPermutations calls fn with every partial permutation of n ports (every injective partial
// map from inputs to outputs, including the empty one); fn must not keep conns.
func partialPermutations(n int, fn func(conns []Conn)) {
	used := make([]bool, n)
	conns := make([]Conn, 0, n)
	var rec func(src int)
	rec = func(src int) {
		if src == n {
			fn(conns)
			return
		}
		rec(src + 1)
		for dst := range n {
			if !used[dst] {
				used[dst] = true
				conns = append(conns, Conn{src, dst})
				rec(src + 1)
				conns = conns[:len(conns)-1]
				used[dst] = false
			}
		}
	}
	rec(0)
}

func TestRouteEveryFullPermutation(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		f, _ := New(n)
		c := newChecker(f)
		conns := make([]Conn, n)
		count := 0
		permutations(n, func(p []int) {
			for i, d := range p {
				conns[i] = Conn{i, d}
			}
			count++
			choices, err := f.Route(conns, nil)
			if err == nil {
				err = c.check(conns, choices)
			}
			if err != nil {
				t.Fatalf("n=%d permutation %v: %v", n, p, err)
			}
		})
		if want := map[int]int{2: 2, 4: 24, 8: 40320}[n]; count != want {
			t.Fatalf("n=%d: routed %d permutations, want %d", n, count, want)
		}
	}
}

func TestRouteEveryPartialPermutation(t *testing.T) {
	// Σ_j C(n,j)² j! partial permutations: 7 for n=2, 209 for n=4, 1441729 for n=8.
	want := map[int]int{2: 7, 4: 209, 8: 1441729}
	for _, n := range []int{2, 4, 8} {
		if n == 8 && testing.Short() {
			continue
		}
		f, _ := New(n)
		c := newChecker(f)
		count := 0
		partialPermutations(n, func(conns []Conn) {
			count++
			choices, err := f.Route(conns, nil)
			if err == nil {
				err = c.check(conns, choices)
			}
			if err != nil {
				t.Fatalf("n=%d %v: %v", n, conns, err)
			}
		})
		if count != want[n] {
			t.Fatalf("n=%d: routed %d partial permutations, want %d", n, count, want[n])
		}
	}
}

func TestRouteRejectsInvalidConnections(t *testing.T) {
	f, _ := New(8)
	cases := []struct {
		name  string
		conns []Conn
		want  string
	}{
		{"shared source", []Conn{{1, 2}, {3, 4}, {1, 5}}, "connections 0 (1->2) and 2 (1->5) share input port 1"},
		{"shared destination", []Conn{{1, 2}, {3, 2}}, "connections 0 (1->2) and 1 (3->2) share output port 2"},
		{"source out of range", []Conn{{8, 0}}, "connection 0 (8->0): port out of range [0, 8)"},
		{"negative destination", []Conn{{0, 1}, {2, -1}}, "connection 1 (2->-1): port out of range [0, 8)"},
	}
	for _, tc := range cases {
		_, err := f.Route(tc.conns, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if _, err := f.RoutePaths(tc.conns); err == nil {
			t.Errorf("%s: RoutePaths accepted it", tc.name)
		}
	}
}

// recordComponents routes conns, flipping the components whose index (in call order) is in flip,
// and returns every component the Chooser saw, with Conns and Child0 copied.
func recordComponents(t *testing.T, f *Fabric, conns []Conn, flip map[int]bool) ([]Component, []uint32) {
	t.Helper()
	var comps []Component
	choices, err := f.Route(conns, func(c Component, _ []uint32) bool {
		comps = append(comps, Component{c.Level, c.Block, slices.Clone(c.Conns), slices.Clone(c.Child0)})
		return flip[len(comps)-1]
	})
	if err != nil {
		t.Fatal(err)
	}
	return comps, choices
}

// Hand-worked from the wiring convention (see the package comment).
//
// 4 ports, permutation 0->2, 1->0, 2->3, 3->1 (connections c0..c3). Level 0 has one block.
// Input switch 0 holds c0, c1; input switch 1 holds c2, c3; output switch 0 (ports 0,1) holds
// c1, c3; output switch 1 (ports 2,3) holds c0, c2. The constraints form the cycle
// c0 -in- c1 -out- c3 -in- c2 -out- c0: one component; orientation 0 puts c0 (the lowest input
// port) upper, so c1 lower, c3 upper, c2 lower.
//
// 8 ports, permutation 0->5, 1->2, 2->7, 3->0, 4->1, 5->6, 6->3, 7->4. Level 0: input switches
// {c0,c1} {c2,c3} {c4,c5} {c6,c7}; output switches (dst>>1): 0 {c3,c4}, 1 {c1,c6}, 2 {c0,c7},
// 3 {c2,c5}. Cycle c0 -in- c1 -out- c6 -in- c7 -out- c0 gives c0,c6 upper and c1,c7 lower; cycle
// c2 -in- c3 -out- c4 -in- c5 -out- c2 gives c2,c4 upper and c3,c5 lower. Level 1, upper block 0
// holds c0,c2,c4,c6 on local inputs src>>1 = 0,1,2,3 and local outputs dst>>1 = 2,3,0,1, so its
// output switches (local>>1) pair c0 with c2 and c4 with c6 — the same pairs as its input
// switches: two 2-cycles {c0,c2} and {c4,c6}, the first of each upper. Lower block 1 holds c1,c3,
// c5,c7 on local inputs 0,1,2,3 and local outputs 1,0,3,2: 2-cycles {c1,c3} and {c5,c7}.
func TestRouteHandWorked(t *testing.T) {
	cases := []struct {
		name    string
		n       int
		dst     []int
		flip    map[int]bool
		comps   []Component
		choices []uint32
	}{
		{
			name:    "4 ports orientation 0",
			n:       4,
			dst:     []int{2, 0, 3, 1},
			comps:   []Component{{0, 0, []int{0, 1, 2, 3}, []uint8{0, 1, 1, 0}}},
			choices: []uint32{0, 1, 1, 0},
		},
		{
			name:    "4 ports flipped",
			n:       4,
			dst:     []int{2, 0, 3, 1},
			flip:    map[int]bool{0: true},
			comps:   []Component{{0, 0, []int{0, 1, 2, 3}, []uint8{0, 1, 1, 0}}},
			choices: []uint32{1, 0, 0, 1},
		},
		{
			name: "8 ports orientation 0",
			n:    8,
			dst:  []int{5, 2, 7, 0, 1, 6, 3, 4},
			comps: []Component{
				{0, 0, []int{0, 1, 6, 7}, []uint8{0, 1, 0, 1}},
				{0, 0, []int{2, 3, 4, 5}, []uint8{0, 1, 0, 1}},
				{1, 0, []int{0, 2}, []uint8{0, 1}},
				{1, 0, []int{4, 6}, []uint8{0, 1}},
				{1, 1, []int{1, 3}, []uint8{0, 1}},
				{1, 1, []int{5, 7}, []uint8{0, 1}},
			},
			// bit 0: level-0 child, bit 1: level-1 child.
			choices: []uint32{0b00, 0b01, 0b10, 0b11, 0b00, 0b01, 0b10, 0b11},
		},
		{
			// Flipping the second level-0 component sends c2,c4 lower and c3,c5 upper, so the
			// upper block now holds c0,c3,c5,c6 (local inputs 0,1,2,3; local outputs 2,0,3,1):
			// input pairs {c0,c3} {c5,c6}, output pairs {c3,c6} {c0,c5}, one 4-cycle
			// c0 -in- c3 -out- c6 -in- c5 -out- c0. The lower block holds c1,c2,c4,c7 (local
			// inputs 0,1,2,3; local outputs 1,3,0,2): input pairs {c1,c2} {c4,c7}, output pairs
			// {c1,c4} {c2,c7}: the 4-cycle c1 -in- c2 -out- c7 -in- c4 -out- c1.
			name: "8 ports second component flipped",
			n:    8,
			dst:  []int{5, 2, 7, 0, 1, 6, 3, 4},
			flip: map[int]bool{1: true},
			comps: []Component{
				{0, 0, []int{0, 1, 6, 7}, []uint8{0, 1, 0, 1}},
				{0, 0, []int{2, 3, 4, 5}, []uint8{0, 1, 0, 1}},
				{1, 0, []int{0, 3, 5, 6}, []uint8{0, 1, 1, 0}},
				{1, 1, []int{1, 2, 4, 7}, []uint8{0, 1, 1, 0}},
			},
			choices: []uint32{0b00, 0b01, 0b11, 0b10, 0b11, 0b10, 0b00, 0b01},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := New(tc.n)
			conns := make([]Conn, len(tc.dst))
			for i, d := range tc.dst {
				conns[i] = Conn{i, d}
			}
			comps, choices := recordComponents(t, f, conns, tc.flip)
			if !reflect.DeepEqual(comps, tc.comps) {
				t.Errorf("components\n got %v\nwant %v", comps, tc.comps)
			}
			if !slices.Equal(choices, tc.choices) {
				t.Errorf("choices %b, want %b", choices, tc.choices)
			}
			if err := newChecker(f).check(conns, choices); err != nil {
				t.Error(err)
			}
		})
	}
}

// The 4-port orientation-0 routing above, written out switch by switch: c0 (0->2) goes upper:
// input switch 0 bar (lane 0 -> 0), middle switch 0 takes it on lane 0 (local port 0) to local
// output 1 (lane 1, cross), output switch 1 takes it from the upper child on lane 0 to port 2
// (lane 0, bar).
func TestRoutePathsHandWorked(t *testing.T) {
	f, _ := New(4)
	paths, err := f.RoutePaths([]Conn{{0, 2}, {1, 0}, {2, 3}, {3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Traversal{
		{{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 1, 0, 0}},
		{{0, 0, 1, 1}, {1, 1, 0, 0}, {2, 0, 1, 0}},
		{{0, 1, 0, 1}, {1, 1, 1, 1}, {2, 1, 1, 1}},
		{{0, 1, 1, 0}, {1, 0, 1, 0}, {2, 0, 0, 1}},
	}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths\n got %v\nwant %v", paths, want)
	}
}

func TestLevelTraversalsMatchPathFrom(t *testing.T) {
	for _, n := range []int{2, 4, 8, 32} {
		f, _ := New(n)
		k := f.Levels()
		for src := range n {
			for dst := range n {
				for c := range uint32(n / 2) {
					p := f.PathFrom(src, dst, c)
					for s := range k {
						// Bits above level s must not matter.
						junk := ^uint32(0) << (s + 1)
						if s == 31 {
							junk = 0
						}
						in, out := f.LevelTraversals(src, dst, c|junk, s)
						if in != p[s] || out != p[2*k-2-s] {
							t.Fatalf("n=%d %d->%d choices %b level %d: got %v %v, want %v %v",
								n, src, dst, c, s, in, out, p[s], p[2*k-2-s])
						}
					}
				}
			}
		}
	}
}

// Property: for random partial permutations up to 256 ports and random orientations, every routing
// is conflict free, the Chooser sees each connection exactly once per level, every component is a
// connected set whose orientation 0 satisfies the input-switch and output-switch constraints, and
// the choices follow the orientation picked.
func TestRouteProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 8).Draw(t, "k")
		n := 1 << k
		f, _ := New(n)
		perm := rapid.Permutation(seq(n)).Draw(t, "perm")
		density := rapid.Float64Range(0, 1).Draw(t, "density")
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		var conns []Conn
		for src, dst := range perm {
			if rng.Float64() < density {
				conns = append(conns, Conn{src, dst})
			}
		}
		rng.Shuffle(len(conns), func(i, j int) { conns[i], conns[j] = conns[j], conns[i] })

		type decided struct {
			c    Component
			flip bool
		}
		var seen []decided
		seenAt := make([]int, len(conns)) // levels at which each connection appeared so far
		choices, err := f.Route(conns, func(c Component, ch []uint32) bool {
			if len(seen) > 0 {
				prev := seen[len(seen)-1].c
				if c.Level < prev.Level || c.Level == prev.Level && c.Block < prev.Block {
					t.Fatalf("component at level %d block %d after level %d block %d", c.Level, c.Block, prev.Level, prev.Block)
				}
			}
			checkComponent(t, f, conns, c, ch)
			for _, i := range c.Conns {
				if seenAt[i] != c.Level {
					t.Fatalf("connection %d appears at level %d after %d levels", i, c.Level, seenAt[i])
				}
				seenAt[i]++
			}
			flip := rng.IntN(2) == 1
			seen = append(seen, decided{c, flip})
			return flip
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range seenAt {
			if l != k-1 {
				t.Fatalf("connection %d appeared at %d levels, want %d", i, l, k-1)
			}
		}
		for _, d := range seen {
			for j, i := range d.c.Conns {
				want := uint32(d.c.Child0[j])
				if d.flip {
					want ^= 1
				}
				if got := choices[i] >> d.c.Level & 1; got != want {
					t.Fatalf("connection %d level %d: bit %d, chooser asked for %d", i, d.c.Level, got, want)
				}
			}
		}
		if err := newChecker(f).check(conns, choices); err != nil {
			t.Fatal(err)
		}
		plain, err := f.Route(conns, nil)
		if err != nil {
			t.Fatal(err)
		}
		zero, _ := f.Route(conns, func(Component, []uint32) bool { return false })
		if !slices.Equal(plain, zero) {
			t.Fatalf("nil chooser %v differs from never flipping %v", plain, zero)
		}
		if err := newChecker(f).check(conns, plain); err != nil {
			t.Fatal(err)
		}
	})
}

// checkComponent checks one component against the constraints of Tetris §3.2, from the global
// ports: at level s the local input port of a connection is src>>s, its input switch src>>(s+1);
// likewise for outputs.
func checkComponent(t *rapid.T, f *Fabric, conns []Conn, c Component, choices []uint32) {
	if len(c.Conns) == 0 || len(c.Conns) != len(c.Child0) {
		t.Fatalf("component %+v: %d conns, %d children", c, len(c.Conns), len(c.Child0))
	}
	if c.Child0[0] != 0 {
		t.Fatalf("component %+v: orientation 0 sends its first connection lower", c)
	}
	s := c.Level
	for j, i := range c.Conns {
		if b := int(blockOf(choices[i], s)); b != c.Block {
			t.Fatalf("component %+v: connection %d is in block %d", c, i, b)
		}
		if j > 0 && conns[c.Conns[j-1]].Src>>s >= conns[i].Src>>s {
			t.Fatalf("component %+v: connections not in local input port order", c)
		}
	}
	// Union the constraint edges inside the component; every edge must join opposite children,
	// and the edges must connect the whole component.
	parent := make([]int, len(c.Conns))
	for j := range parent {
		parent[j] = j
	}
	find := func(x int) int {
		for parent[x] != x {
			x = parent[x]
		}
		return x
	}
	for a := range c.Conns {
		for b := a + 1; b < len(c.Conns); b++ {
			ca, cb := conns[c.Conns[a]], conns[c.Conns[b]]
			if ca.Src>>(s+1) == cb.Src>>(s+1) || ca.Dst>>(s+1) == cb.Dst>>(s+1) {
				if c.Child0[a] == c.Child0[b] {
					t.Fatalf("component %+v: connections %d and %d share a switch but go to the same child", c, c.Conns[a], c.Conns[b])
				}
				parent[find(a)] = find(b)
			}
		}
	}
	for j := range c.Conns {
		if find(j) != find(0) {
			t.Fatalf("component %+v is not connected", c)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// goldenRoute is one routed connection in testdata/route8.json.
type goldenRoute struct {
	Src     int         `json:"src"`
	Dst     int         `json:"dst"`
	Choices uint32      `json:"choices"`
	Path    []Traversal `json:"path"`
}

func TestRouteGolden(t *testing.T) {
	f, _ := New(8)
	conns := []Conn{{0, 5}, {1, 2}, {2, 7}, {3, 0}, {4, 1}, {5, 6}, {6, 3}, {7, 4}}
	choices, err := f.Route(conns, nil)
	if err != nil {
		t.Fatal(err)
	}
	routes := make([]goldenRoute, len(conns))
	for i, c := range conns {
		routes[i] = goldenRoute{c.Src, c.Dst, choices[i], f.PathFrom(c.Src, c.Dst, choices[i])}
	}
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, r := range routes {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("  ")
		buf.Write(b)
		if i < len(routes)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	file := filepath.Join("testdata", "route8.json")
	if goldenfile.Update() {
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("routing of %v differs from %s:\n got %s\nwant %s", conns, file, buf.Bytes(), want)
	}
	// The file must also read back into paths that are valid for the fabric.
	var back []goldenRoute
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, r := range back {
		if err := f.CheckPath(r.Src, r.Dst, PathOf(r.Path)); err != nil {
			t.Errorf("%s: %d->%d: %v", file, r.Src, r.Dst, err)
		}
	}
}

// TestRouterReuseProperty routes a sequence of partial permutations, some of them invalid, with
// one Router and compares every result and every component its Chooser saw with a fresh
// Fabric.Route of the same connections: the memory a Router keeps between calls must not leak
// into a later routing.
func TestRouterReuseProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 7).Draw(t, "k")
		n := 1 << k
		f, _ := New(n)
		rt := f.NewRouter()
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 2))
		// The chooser's decision depends only on the component, so both routings decide alike.
		type seen struct {
			level, block int
			conns        []Conn
			child0       []uint8
		}
		record := func(conns []Conn, log *[]seen) Chooser {
			return func(c Component, _ []uint32) bool {
				s := seen{level: c.Level, block: c.Block, child0: slices.Clone(c.Child0)}
				h := c.Level*31 + c.Block
				for _, i := range c.Conns {
					s.conns = append(s.conns, conns[i])
					h = h*17 + conns[i].Src*3 + conns[i].Dst
				}
				*log = append(*log, s)
				return h%3 == 0
			}
		}
		for round := range rapid.IntRange(1, 6).Draw(t, "rounds") {
			perm := rng.Perm(n)
			density := rng.Float64()
			var conns []Conn
			for src, dst := range perm {
				if rng.Float64() < density {
					conns = append(conns, Conn{src, dst})
				}
			}
			if len(conns) > 1 && rng.IntN(4) == 0 {
				conns[1].Dst = conns[0].Dst // an invalid matching: both must refuse it alike
			}
			plain := rng.IntN(3) == 0
			var logFresh, logReused []seen
			chooseFresh, chooseReused := record(conns, &logFresh), record(conns, &logReused)
			if plain {
				chooseFresh, chooseReused = nil, nil
			}
			want, errWant := f.Route(conns, chooseFresh)
			got, errGot := rt.Route(conns, chooseReused)
			if fmt.Sprint(errWant) != fmt.Sprint(errGot) {
				t.Fatalf("round %d: Router error %v, Fabric.Route error %v", round, errGot, errWant)
			}
			if errWant != nil {
				continue
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: Router choices %v, Fabric.Route %v", round, got, want)
			}
			if !reflect.DeepEqual(logReused, logFresh) {
				t.Fatalf("round %d: Router components %v, Fabric.Route %v", round, logReused, logFresh)
			}
			if err := newChecker(f).check(conns, got); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	})
}
