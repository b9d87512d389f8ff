// Package benes describes an n×n Beneš network of 2×2 switches: its wiring, the paths through it,
// and (in route.go and query.go) routing of partial permutations and earliest-start path queries.
//
// Wiring convention (shared by every file format in this project, so that a path means the same
// thing to every reader): a block of size m at recursion level s has input switches j = 0..m/2−1;
// local input ports 2j and 2j+1 enter switch j on lanes 0 and 1; lane 0 out of input switch j goes
// to local input port j of the upper child block, lane 1 to local input port j of the lower child
// block; output switch j takes lane 0 from local output port j of the upper child and lane 1 from
// the lower child, and its lanes 0 and 1 leave on local output ports 2j and 2j+1. At level s there
// are 2^s blocks; block b's children are blocks 2b (upper) and 2b+1 (lower) of level s+1; in each
// stage the switches of block 0 come first. The middle stage (k−1) is the blocks of size 2. Level
// s's input switches are stage s; its output switches are stage 2k−2−s.
package benes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
)

// State is the setting of one 2×2 switch.
type State uint8

const (
	// Bar connects lane 0 to lane 0 and lane 1 to lane 1.
	Bar State = 0
	// Cross connects lane 0 to lane 1 and lane 1 to lane 0.
	Cross State = 1
)

func (s State) String() string {
	switch s {
	case Bar:
		return "bar"
	case Cross:
		return "cross"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// StateOf is the switch state that connects in-lane in to out-lane out.
func StateOf(in, out int) State {
	if in == out {
		return Bar
	}
	return Cross
}

// Traversal is one hop of a path: through switch Switch of stage Stage, entering on lane In and
// leaving on lane Out. In files it is written as the array [stage, switch, in_lane, out_lane].
type Traversal struct {
	Stage, Switch, In, Out int
}

// State is the switch state this traversal requires.
func (t Traversal) State() State { return StateOf(t.In, t.Out) }

// MaxPorts is the largest fabric this package builds (2^20 ports); it keeps path choices in a uint32.
const MaxPorts = 1 << 20

// Fabric is an n×n Beneš network, n = 2^k ≥ 2. It is immutable and safe for concurrent use.
type Fabric struct {
	n, k int
}

// New returns the Beneš fabric with n ports; n must be a power of two, 2 ≤ n ≤ MaxPorts.
func New(n int) (*Fabric, error) {
	if n < 2 || n > MaxPorts || n&(n-1) != 0 {
		return nil, fmt.Errorf("benes: fabric size %d is not a power of two in [2, %d]", n, MaxPorts)
	}
	return &Fabric{n: n, k: bits.TrailingZeros(uint(n))}, nil
}

// SizeFor is the smallest Beneš size (a power of two, at least 2) that has ports ports; the ports
// above the real ones are idle padding.
func SizeFor(ports int) int {
	n := 2
	for n < ports {
		n <<= 1
	}
	return n
}

// Ports is n.
func (f *Fabric) Ports() int { return f.n }

// Levels is k = log2(n), the number of recursion levels (the middle stage is level k−1).
func (f *Fabric) Levels() int { return f.k }

// Stages is 2k−1.
func (f *Fabric) Stages() int { return 2*f.k - 1 }

// SwitchesPerStage is n/2.
func (f *Fabric) SwitchesPerStage() int { return f.n / 2 }

// NumSwitches is n·log2(n) − n/2.
func (f *Fabric) NumSwitches() int { return f.Stages() * f.n / 2 }

// SwitchID numbers switches densely: stage·(n/2) + switch.
func (f *Fabric) SwitchID(stage, sw int) int { return stage*(f.n/2) + sw }

// LaneID numbers the input (or output) lanes of all switches densely: 2·SwitchID + lane.
func (f *Fabric) LaneID(stage, sw, lane int) int { return 2*f.SwitchID(stage, sw) + lane }

// NumLanes is the number of input lanes (equally, output lanes) over all switches.
func (f *Fabric) NumLanes() int { return 2 * f.NumSwitches() }

// level is the recursion level a stage belongs to.
func (f *Fabric) level(stage int) int {
	if stage < f.k {
		return stage
	}
	return 2*f.k - 2 - stage
}

// Next follows the wire that leaves switch sw of stage stage on lane out. It returns the next
// switch and the lane it enters on, or, from the last stage, the output port (nextStage = Stages()).
func (f *Fabric) Next(stage, sw, out int) (nextStage, nextSw, inLane int) {
	last := f.Stages() - 1
	if stage == last {
		return f.Stages(), 2*sw + out, 0
	}
	if stage < f.k-1 {
		// Input side: half is the number of switches per block at this level.
		half := f.n >> (stage + 1)
		b, j := sw/half, sw%half
		return stage + 1, (2*b+out)*(half/2) + j>>1, j & 1
	}
	// Middle or output side: this switch is local switch j of child block c; its out lane leaves
	// on local output port p = 2j+out, which enters output switch p of the parent block on lane c&1.
	s := f.level(stage)
	half := f.n >> (s + 1)
	c, j := sw/half, sw%half
	p := 2*j + out
	parentHalf := half * 2
	return stage + 1, (c>>1)*parentHalf + p, c & 1
}

// PathFrom builds the path from input port src to output port dst that takes, at recursion level
// s = 0..k−2, the upper child if bit s of choices is 0 and the lower child if it is 1. Every one of
// the n/2 values of choices gives a distinct physical path; these are all the paths from src to dst.
// dst is the output port; the caller keeps src and dst within [0, n).
func (f *Fabric) PathFrom(src, dst int, choices uint32) []Traversal {
	p := make([]Traversal, f.Stages())
	f.fillPath(p, src, dst, choices)
	return p
}

// fillPath is PathFrom writing into p, which must have length Stages().
func (f *Fabric) fillPath(p []Traversal, src, dst int, choices uint32) {
	k := f.k
	// Input side, forward.
	sw, in := src>>1, src&1
	for s := 0; s < k-1; s++ {
		out := int(choices>>s) & 1
		p[s] = Traversal{Stage: s, Switch: sw, In: in, Out: out}
		_, sw, in = f.Next(s, sw, out)
	}
	mid := k - 1
	// Output side, backward from dst: at level s the local output port within the block is
	// dstLocal; the output switch is dstLocal>>1 and the out lane dstLocal&1.
	block, dstLocal := 0, dst
	for s := 0; s < k-1; s++ {
		c := int(choices>>s) & 1
		half := f.n >> (s + 1)
		stage := 2*k - 2 - s
		p[stage] = Traversal{Stage: stage, Switch: block*half + dstLocal>>1, In: c, Out: dstLocal & 1}
		block = 2*block + c
		dstLocal >>= 1
	}
	p[mid] = Traversal{Stage: mid, Switch: sw, In: in, Out: dstLocal & 1}
}

// CheckPath reports, as an error, the first way p fails to be a physical path of this fabric from
// input port src to output port dst.
func (f *Fabric) CheckPath(src, dst int, p Path) error {
	if src < 0 || src >= f.n || dst < 0 || dst >= f.n {
		return fmt.Errorf("port out of range: src %d, dst %d on a %d-port fabric", src, dst, f.n)
	}
	if ps, pd, _, k, ok := p.Compact(); ok && k == f.k && ps == src && pd == dst {
		// A compact path is a physical path of the fabric with k levels, by construction.
		return nil
	}
	if p.Len() != f.Stages() {
		return fmt.Errorf("path has %d traversals, a %d-port Beneš path has %d", p.Len(), f.n, f.Stages())
	}
	stage, sw, in := 0, src>>1, src&1
	for i, t := range p.All() {
		if t.Stage != stage || t.Switch != sw || t.In != in {
			return fmt.Errorf("traversal %d is [%d,%d,%d,%d], the wiring leads to stage %d switch %d lane %d",
				i, t.Stage, t.Switch, t.In, t.Out, stage, sw, in)
		}
		if t.Out != 0 && t.Out != 1 {
			return fmt.Errorf("traversal %d has out-lane %d (lanes are 0 and 1)", i, t.Out)
		}
		stage, sw, in = f.Next(t.Stage, t.Switch, t.Out)
	}
	if sw != dst {
		return fmt.Errorf("path from %d ends at output port %d, not %d", src, sw, dst)
	}
	return nil
}

// Choices recovers the child choices of a valid path (the inverse of PathFrom).
func (f *Fabric) Choices(p []Traversal) uint32 {
	var c uint32
	for s := 0; s < f.k-1 && s < len(p); s++ {
		c |= uint32(p[s].Out&1) << s
	}
	return c
}

// MarshalJSON writes the traversal as [stage, switch, in_lane, out_lane]. A schedule file holds
// one per switch on every path (millions at 512 ports), so it appends digits rather than format.
func (t Traversal) MarshalJSON() ([]byte, error) {
	return t.appendJSON(make([]byte, 0, 24)), nil
}

// appendJSON appends [stage,switch,in,out] to b.
func (t Traversal) appendJSON(b []byte) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(t.Stage), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.Switch), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.In), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(t.Out), 10)
	return append(b, ']')
}

// UnmarshalJSON reads [stage, switch, in_lane, out_lane]. Its errors are *TraversalError.
func (t *Traversal) UnmarshalJSON(b []byte) error {
	if tr, ok := parseTraversal(b); ok {
		*t = tr
		return nil
	}
	// An error keeps its own copy of b: the decoder reuses its buffer.
	var a []int
	if err := json.Unmarshal(b, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &TraversalError{Value: slices.Clone(b), Offset: te.Offset, Problem: jsonerr.TypeProblem(b, te)}
		}
		return &TraversalError{Value: slices.Clone(b), Problem: fmt.Sprintf("want [stage, switch, in_lane, out_lane]: %v", err)}
	}
	if a == nil {
		// encoding/json reads null into a slice as no slice and no error.
		return &TraversalError{Value: slices.Clone(b), Problem: "want 4 integers [stage, switch, in_lane, out_lane], not null"}
	}
	if len(a) != 4 {
		return &TraversalError{Value: slices.Clone(b), Problem: fmt.Sprintf("want 4 integers [stage, switch, in_lane, out_lane], got %d", len(a))}
	}
	*t = Traversal{Stage: a[0], Switch: a[1], In: a[2], Out: a[3]}
	return nil
}

// A TraversalError is a traversal that does not decode: Value is the traversal as given, Offset
// the byte of Value that encoding/json's own errors would point at (0, the start, for the wrong
// number of elements), Problem what is wrong, naming the value. UnmarshalJSON sees only the
// traversal's bytes, so only a reader that knows where they lie in its file can name the line
// and column (schedules.ReadSchedule does).
type TraversalError struct {
	Value   []byte
	Offset  int64
	Problem string
}

// InnerOffset is Offset, for jsonerr.Place, which adds it to the traversal's start in its file.
func (e *TraversalError) InnerOffset() int64 { return e.Offset }

// Error names the traversal as given, cut to 40 characters, and compacted when it spans lines,
// so that the message stays one line.
func (e *TraversalError) Error() string {
	v := string(e.Value)
	if strings.ContainsAny(v, "\r\n") {
		var c bytes.Buffer
		if json.Compact(&c, e.Value) == nil {
			v = c.String()
		} else {
			v = strings.Join(strings.Fields(v), " ")
		}
	}
	return fmt.Sprintf("traversal %s: %s", jsonerr.Shorten(v), e.Problem)
}

// parseTraversal reads the usual form, four small non-negative integers in brackets, without
// the reflection of json.Unmarshal (a schedule of 10^6 circuits spent seconds there); anything
// else goes the general way, which also explains errors.
func parseTraversal(b []byte) (Traversal, bool) {
	var v [4]int
	i, k := 0, 0
	space := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	space()
	if i >= len(b) || b[i] != '[' {
		return Traversal{}, false
	}
	i++
	for ; k < 4; k++ {
		space()
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start < 9 {
			v[k] = v[k]*10 + int(b[i]-'0')
			i++
		}
		if i == start || (i-start > 1 && b[start] == '0') || (i < len(b) && b[i] >= '0' && b[i] <= '9') {
			return Traversal{}, false
		}
		space()
		want := byte(',')
		if k == 3 {
			want = ']'
		}
		if i >= len(b) || b[i] != want {
			return Traversal{}, false
		}
		i++
	}
	space()
	if i != len(b) {
		return Traversal{}, false
	}
	return Traversal{Stage: v[0], Switch: v[1], In: v[2], Out: v[3]}, true
}

// MarshalText writes "bar" or "cross".
func (s State) MarshalText() ([]byte, error) {
	if s != Bar && s != Cross {
		return nil, fmt.Errorf("invalid switch state %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads "bar" or "cross".
func (s *State) UnmarshalText(b []byte) error {
	switch string(b) {
	case "bar":
		*s = Bar
	case "cross":
		*s = Cross
	default:
		if len(b) > 40 {
			b = append(b[:37:37], "..."...)
		}
		return fmt.Errorf("switch state %q is not \"bar\" or \"cross\"", b)
	}
	return nil
}
