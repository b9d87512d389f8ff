package schedules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// FormatVersion is the version of the schedule file this package reads and writes.
const FormatVersion = 1

// FabricKind names the interconnect a schedule is planned for.
type FabricKind string

const (
	// Benes is the rearrangeably non-blocking Beneš network of 2×2 switches.
	Benes FabricKind = "benes"
	// Crossbar is an ideal strictly non-blocking fabric: only endpoints conflict.
	Crossbar FabricKind = "crossbar"
)

// Mode is how a schedule is executed.
type Mode string

const (
	// Partial reconfiguration: each circuit starts as soon as its own endpoints, lanes and switch
	// states are free (Tetris §3.3).
	Partial Mode = "partial"
	// Barrier rounds: a round starts when the previous one has fully completed.
	Barrier Mode = "barrier"
)

// Params are the inputs a schedule was planned with.
type Params struct {
	// BandwidthBytesPerSecond is the per-port link bandwidth b.
	BandwidthBytesPerSecond float64 `json:"bandwidth_bytes_per_second"`
	// ReconfigSeconds is the switch reconfiguration delay α_r.
	ReconfigSeconds float64 `json:"reconfig_seconds"`
	// Options records scheduler options (ablations, orders) as strings, for provenance.
	Options map[string]string `json:"options,omitempty"`
}

// Circuit is one transfer over one established path.
type Circuit struct {
	Src   int   `json:"src"`
	Dst   int   `json:"dst"`
	Bytes int64 `json:"bytes"`
	// Group is the planning matching (partial mode) or the round (barrier mode), from 0.
	Group int `json:"group"`
	// Path is the Beneš route from input port Src to output port Dst; empty on a crossbar. In the
	// file it is the list of traversals (benes.Path reads and writes it so).
	Path benes.Path `json:"path"`
	// PlannedStart and PlannedEnd are the scheduler's own estimate, in seconds, if it makes one.
	PlannedStart *float64 `json:"planned_start,omitempty"`
	PlannedEnd   *float64 `json:"planned_end,omitempty"`
}

// Round gives a barrier round a minimum duration (a BvN round lasts its stuffed duration even if
// its real bytes finish earlier).
type Round struct {
	Group           int     `json:"group"`
	PlannedDuration float64 `json:"planned_duration"`
}

// Schedule is a circuit schedule: circuits in schedule order, the order that every resource they
// share is used in.
type Schedule struct {
	Version   int    `json:"version"`
	Algorithm string `json:"algorithm"`
	// N is the fabric size (a power of two on Beneš); Ports is the number of real ports, the rest
	// being idle padding. Ports = N when no padding was needed.
	N        int        `json:"n"`
	Ports    int        `json:"ports"`
	Fabric   FabricKind `json:"fabric"`
	Mode     Mode       `json:"mode"`
	Params   Params     `json:"params"`
	Circuits []Circuit  `json:"circuits"`
	Rounds   []Round    `json:"rounds,omitempty"`
}

// Groups is the number of planning groups (rounds in barrier mode): one more than the largest group.
func (s *Schedule) Groups() int {
	g := 0
	for _, c := range s.Circuits {
		g = max(g, c.Group+1)
	}
	return g
}

// Fabric returns the Beneš fabric the schedule runs on, or nil for a crossbar.
func (s *Schedule) BenesFabric() (*benes.Fabric, error) {
	if s.Fabric != Benes {
		return nil, nil
	}
	return benes.New(s.N)
}

// Validate checks the header fields and the limits (see limits.go): the fabric size on either
// fabric, finite parameters, and per circuit and round the byte counts, groups and times that the
// executor computes with. Verify (through Validate) checks everything else.
func (s *Schedule) Validate() error {
	if s.Version != FormatVersion {
		return fmt.Errorf("field version: %d is not supported (this build reads version %d)", s.Version, FormatVersion)
	}
	if s.Fabric != Benes && s.Fabric != Crossbar {
		return fmt.Errorf("field fabric: %q is not \"benes\" or \"crossbar\"", s.Fabric)
	}
	if s.Mode != Partial && s.Mode != Barrier {
		return fmt.Errorf("field mode: %q is not \"partial\" or \"barrier\"", s.Mode)
	}
	if s.N < 1 {
		return fmt.Errorf("field n: %d is not a positive fabric size", s.N)
	}
	if s.N > MaxFabricPorts {
		return fmt.Errorf("field n: %d is %w of %d ports on any fabric", s.N, ErrLimit, MaxFabricPorts)
	}
	if s.Fabric == Benes {
		if _, err := benes.New(s.N); err != nil {
			return fmt.Errorf("field n: %w", err)
		}
	}
	if s.Ports < 1 || s.Ports > s.N {
		return fmt.Errorf("field ports: %d is not in [1, n=%d]", s.Ports, s.N)
	}
	if b := s.Params.BandwidthBytesPerSecond; !(b >= 0) || math.IsInf(b, 0) {
		return fmt.Errorf("field params.bandwidth_bytes_per_second: %g is not a finite, non-negative bandwidth", b)
	}
	if err := CheckSeconds("field params.reconfig_seconds", s.Params.ReconfigSeconds); err != nil {
		return err
	}
	_, err := validateEntries(s.Circuits, s.Rounds, 0, 0)
	return err
}

// validateEntries checks Validate's limits on circuits (numbered from base in errors) and rounds,
// adding their bytes to total, which it returns.
func validateEntries(cs []Circuit, rounds []Round, base int, total int64) (int64, error) {
	for i := range cs {
		c := &cs[i]
		// Formatted only on an error: emulator.Run validates on every run, without allocating.
		f := func() string { return fmt.Sprintf("field circuits[%d]", base+i) }
		if c.Group > MaxGroup {
			return total, fmt.Errorf("%s.group: %d is %w of %d", f(), c.Group, ErrLimit, MaxGroup)
		}
		if c.Bytes > MaxBytes {
			return total, fmt.Errorf("%s.bytes: %d is %w of %d bytes (2^53) that keeps sums exact", f(), c.Bytes, ErrLimit, MaxBytes)
		}
		var ok bool
		if total, ok = AddBytes(total, max(c.Bytes, 0)); !ok {
			return total, fmt.Errorf("%s.bytes: %d brings the schedule's total %w of %d bytes (2^53) that keeps sums exact", f(), c.Bytes, ErrLimit, MaxBytes)
		}
		if c.PlannedStart != nil && !validSeconds(*c.PlannedStart) {
			return total, CheckSeconds(f()+".planned_start", *c.PlannedStart)
		}
		if c.PlannedEnd != nil && !validSeconds(*c.PlannedEnd) {
			return total, CheckSeconds(f()+".planned_end", *c.PlannedEnd)
		}
	}
	for i, r := range rounds {
		if r.Group > MaxGroup {
			return total, fmt.Errorf("field rounds[%d].group: %d is %w of %d", i, r.Group, ErrLimit, MaxGroup)
		}
		if !validSeconds(r.PlannedDuration) {
			return total, CheckSeconds(fmt.Sprintf("field rounds[%d].planned_duration", i), r.PlannedDuration)
		}
	}
	return total, nil
}

// ReadSchedule decodes a schedule file strictly (no unknown fields, nothing after the object)
// and checks its header and limits (Validate); name is used in errors, which are one line naming
// the line, the field and the value. It does not run the static checks of Verify: verify lists
// those as violations; every other reader calls CheckStatic or Verify next (LoadChecked does).
//
// A well-formed file is decoded as it is read, one circuit at a time (streamSchedule): a 250 MB
// schedule never has its text in memory. Anything the streaming decoder does not accept is decoded
// again whole (decodeSchedule), from the start of r when r can seek and from a copy of what was
// read otherwise, so that every error is the whole-file decoder's, with its line and column.
func ReadSchedule(r io.Reader, name string) (*Schedule, error) {
	rs, seekable := r.(io.ReadSeeker)
	var start int64
	if seekable {
		var err error
		if start, err = rs.Seek(0, io.SeekCurrent); err != nil {
			seekable = false
		}
	}
	var copied *bytes.Buffer
	src := r
	if !seekable {
		copied = new(bytes.Buffer)
		src = io.TeeReader(r, copied)
	}
	watched := &readWatch{r: src}
	if s, ok := streamSchedule(watched); ok {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return s, nil
	}
	if watched.err != nil {
		return nil, fmt.Errorf("%s: %w", name, watched.err)
	}
	var data []byte
	var err error
	if seekable {
		if _, err = rs.Seek(start, io.SeekStart); err == nil {
			data, err = io.ReadAll(rs)
		}
	} else {
		var rest []byte
		rest, err = io.ReadAll(r)
		data = append(copied.Bytes(), rest...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return decodeSchedule(data, name)
}

// decodeSchedule is ReadSchedule on the whole file's text: a version 2 file (fileVersion) is
// decoded by decodeCompact, anything else as version 1.
func decodeSchedule(data []byte, name string) (*Schedule, error) {
	if fileVersion(data) == CompactFormatVersion {
		return decodeCompact(data, name)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f scheduleFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, describe(data, err))
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		line, col := jsonerr.Position(data, end+int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n"))))
		return nil, fmt.Errorf("%s: line %d, column %d: trailing data after the schedule object", name, line, col)
	}
	s := f.schedule()
	if err := checkFileVersion(s.Version); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// checkFileVersion refuses a file version this build does not read, before Validate (whose
// message is about the schedule's own version) would.
func checkFileVersion(v int) error {
	if v != FormatVersion && v != CompactFormatVersion {
		return fmt.Errorf("field version: %d is not supported (this build reads versions %d and %d)", v, FormatVersion, CompactFormatVersion)
	}
	return nil
}

// describe is jsonerr.Describe for a schedule file. A traversal that does not decode is placed at
// its line and column in the file, under the field name encoding/json gives the hop lists
// (circuits.path): benes.Traversal decodes its own bytes, so its error holds offsets in those
// alone (TraversalError.InnerOffset, which Place adds to the traversal's start), and the decoder
// adds no position to an Unmarshaler's error. Only a TraversalError is looked for: Place walks
// the whole file, which a huge schedule with an unknown field should not pay for.
func describe(data []byte, err error) error {
	var te *benes.TraversalError
	if !errors.As(err, &te) {
		return jsonerr.Describe(data, err)
	}
	return jsonerr.Describe(data, jsonerr.Place(data, err, traversalPatterns, checkTraversal))
}

// traversalPatterns are the jsonerr.Find patterns of a schedule's traversals.
var traversalPatterns = [][]string{{"circuits", "[]", "path", "[]"}}

// checkTraversal refuses a traversal that does not decode, with its own error.
func checkTraversal(raw []byte) error {
	var t benes.Traversal
	return t.UnmarshalJSON(raw)
}

// scheduleFile is a schedule as the decoder reads it: hop lists decode as []benes.Traversal, so
// that encoding/json reports a bad one at its line and column in the file (a benes.Path decoding
// itself would see only its own bytes; describe places a bad traversal); schedule then compacts
// them. It repeats Schedule's fields
// rather than embedding it, since the decoder would name an embedded struct in its errors
// (field Schedule.n); TestScheduleFileMirrorsSchedule keeps the two in step.
type scheduleFile struct {
	Version   int           `json:"version"`
	Algorithm string        `json:"algorithm"`
	N         int           `json:"n"`
	Ports     int           `json:"ports"`
	Fabric    FabricKind    `json:"fabric"`
	Mode      Mode          `json:"mode"`
	Params    Params        `json:"params"`
	Circuits  []fileCircuit `json:"circuits"`
	Rounds    []Round       `json:"rounds,omitempty"`
}

// fileCircuit is Circuit with its path as read.
type fileCircuit struct {
	Src          int               `json:"src"`
	Dst          int               `json:"dst"`
	Bytes        int64             `json:"bytes"`
	Group        int               `json:"group"`
	Path         []benes.Traversal `json:"path"`
	PlannedStart *float64          `json:"planned_start,omitempty"`
	PlannedEnd   *float64          `json:"planned_end,omitempty"`
}

// schedule converts what was read, dropping the hop lists as it goes (benes.FromOwned keeps a
// list that is not a physical path without copying it).
func (f *scheduleFile) schedule() *Schedule {
	s := &Schedule{Version: f.Version, Algorithm: f.Algorithm, N: f.N, Ports: f.Ports, Fabric: f.Fabric,
		Mode: f.Mode, Params: f.Params, Rounds: f.Rounds}
	if f.Circuits != nil {
		s.Circuits = make([]Circuit, len(f.Circuits))
	}
	for i := range f.Circuits {
		c := &f.Circuits[i]
		s.Circuits[i] = c.circuit()
		c.Path = nil
	}
	return s
}

// circuit is the Circuit c holds, its hop list compacted or kept (benes.FromOwned).
func (c *fileCircuit) circuit() Circuit {
	return Circuit{Src: c.Src, Dst: c.Dst, Bytes: c.Bytes, Group: c.Group,
		Path: benes.FromOwned(c.Path), PlannedStart: c.PlannedStart, PlannedEnd: c.PlannedEnd}
}

// LoadSchedule reads a schedule file from disk (ReadSchedule).
func LoadSchedule(path string) (*Schedule, error) {
	// Within readlimit's limit for a schedule, and only a regular file (a FIFO is not waited
	// on, /dev/zero not read forever).
	f, err := readlimit.Open(context.Background(), path, readlimit.Schedule)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSchedule(f, path)
}

// LoadChecked is LoadSchedule followed by CheckStatic: the reader for every command that
// executes a schedule file, so that it runs nothing verify would reject on the file alone. The
// static violations come back as a *StaticError.
func LoadChecked(path string) (*Schedule, error) {
	s, err := LoadSchedule(path)
	if err != nil {
		return nil, err
	}
	if vs := CheckStatic(s); len(vs) > 0 {
		return nil, &StaticError{Name: path, Violations: vs}
	}
	return s, nil
}

// StaticError is a schedule file that reads but fails the static checks.
type StaticError struct {
	Name       string
	Violations []Violation
}

func (e *StaticError) Error() string {
	return fmt.Sprintf("%s: invalid schedule: %v", e.Name, ViolationsError(e.Violations))
}
