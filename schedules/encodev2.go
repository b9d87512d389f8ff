package schedules

import (
	"fmt"
	"io"
	"math/bits"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// CompactFormatVersion is the compact schedule file (version 2): the header and rounds of
// version 1, and one line per circuit whose Beneš path, when it is a physical path from the
// circuit's source to its destination, is written as its choices alone: bit s is the upper (0)
// or lower (1) subnetwork the path takes at recursion level s, k−1 bits on a fabric of n = 2^k
// ports (benes.PathFrom), instead of the 2k−1 traversals of four numbers that version 1 spreads
// over 6·(2k−1) lines. Any other path (a crossbar circuit's empty one, an absent one, a hop list
// that is not a physical path) is written as "path", as in version 1. Both versions decode to
// the same Schedule, whose Version is FormatVersion: the version is the file's encoding, not the
// schedule's.
const CompactFormatVersion = 2

// WriteVersion writes the schedule file in the given file version: FormatVersion is WriteJSON's
// text, CompactFormatVersion the compact one. Like WriteJSON it streams circuit by circuit and
// checks every float before writing anything.
func (s *Schedule) WriteVersion(w io.Writer, version int) error {
	switch version {
	case FormatVersion:
		return s.WriteJSON(w)
	case CompactFormatVersion:
		return s.writeCompact(w)
	}
	return fmt.Errorf("schedule file version %d: this build writes versions %d and %d", version, FormatVersion, CompactFormatVersion)
}

// writeCompact writes the version 2 text: version 1's header and rounds, one circuit per line.
func (s *Schedule) writeCompact(w io.Writer) error {
	return s.write(w, CompactFormatVersion, choiceLevels(s), (*scheduleEncoder).compactCircuit, (*scheduleEncoder).compactRound)
}

// compactRound writes a version 2 round on one line.
func (e *scheduleEncoder) compactRound(r *Round) {
	e.Str("\n  {\"group\":")
	e.Int(r.Group)
	e.Str(",\"planned_duration\":")
	e.Float(r.PlannedDuration)
	e.Str("}")
}

// choiceLevels is k of the schedule's Beneš fabric (n = 2^k), or 0 where its paths cannot be
// written as choices (a crossbar, or a header that names no Beneš fabric: then every path is
// written as its hop list and the reader refuses the header, as for version 1).
func choiceLevels(s *Schedule) int {
	if s.Fabric != Benes || s.N < 2 || s.N > MaxFabricPorts || s.N&(s.N-1) != 0 {
		return 0
	}
	return bits.TrailingZeros(uint(s.N))
}

// compactCircuit writes one circuit on one line, its path as choices where choicesOf allows.
func (e *scheduleEncoder) compactCircuit(c *Circuit) {
	e.Str("\n  {\"src\":")
	e.Int(c.Src)
	e.Str(",\"dst\":")
	e.Int(c.Dst)
	e.Str(",\"bytes\":")
	e.Int64(c.Bytes)
	e.Str(",\"group\":")
	e.Int(c.Group)
	if choices, ok := choicesOf(c, e.k); ok {
		e.Str(",\"choices\":")
		e.Int64(int64(choices))
	} else {
		e.Str(",\"path\":")
		b, _ := c.Path.MarshalJSON() // a Path always marshals
		e.B = append(e.B, b...)
	}
	if c.PlannedStart != nil {
		e.Str(",\"planned_start\":")
		e.Float(*c.PlannedStart)
	}
	if c.PlannedEnd != nil {
		e.Str(",\"planned_end\":")
		e.Float(*c.PlannedEnd)
	}
	e.Str("}")
}

// choicesOf returns the choices that rebuild c's path from c's own ports on a fabric of k levels
// (what the reader does with them), and whether c's path is such a path.
func choicesOf(c *Circuit, k int) (uint32, bool) {
	if k == 0 {
		return 0, false
	}
	src, dst, choices, pk, ok := c.Path.Compact()
	return choices, ok && pk == k && src == c.Src && dst == c.Dst
}

// compactChoicesPath is the path a version 2 circuit's choices stand for on fab, or an error
// naming the field and the value: the choices must be below 2^(k−1) (higher bits would not
// change the path, so a path has exactly one spelling) and the circuit's ports on the fabric.
func compactChoicesPath(fab *benes.Fabric, i int, src, dst int, choices int64) (benes.Path, error) {
	field := fmt.Sprintf("field circuits[%d].choices", i)
	if fab == nil {
		return benes.Path{}, fmt.Errorf("%s: %d on a crossbar (its circuits have no path; write \"path\": [])", field, choices)
	}
	k, n := fab.Levels(), fab.Ports()
	if limit := int64(1) << (k - 1); choices < 0 || choices >= limit {
		return benes.Path{}, fmt.Errorf("%s: %d is not in [0, %d), the choices of a %d-port Beneš fabric (k−1 = %d bits)", field, choices, limit, n, k-1)
	}
	if src < 0 || src >= n || dst < 0 || dst >= n {
		return benes.Path{}, fmt.Errorf("%s: %d for a circuit %d→%d, whose ports are not both in [0, %d)", field, choices, src, dst, n)
	}
	return fab.NewPath(src, dst, uint32(choices)), nil
}
