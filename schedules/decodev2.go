package schedules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// fileVersion is the version a schedule file's text says it is, 0 where it says none that an
// int holds (or is not a JSON object): decodeSchedule then decodes it as version 1, whose errors
// such a file gets.
func fileVersion(data []byte) int {
	var probe struct{ Version json.RawMessage }
	// The first value only: trailing data is the decoder's to report.
	if json.NewDecoder(bytes.NewReader(data)).Decode(&probe) != nil {
		return 0
	}
	v, err := strconv.Atoi(string(probe.Version))
	if err != nil {
		return 0
	}
	return v
}

// compactFile is a version 2 schedule file as the decoder reads it: scheduleFile with circuits
// that may carry choices (TestScheduleFileMirrorsSchedule keeps the fields in step).
type compactFile struct {
	Version   int              `json:"version"`
	Algorithm string           `json:"algorithm"`
	N         int              `json:"n"`
	Ports     int              `json:"ports"`
	Fabric    FabricKind       `json:"fabric"`
	Mode      Mode             `json:"mode"`
	Params    Params           `json:"params"`
	Circuits  []compactCircuit `json:"circuits"`
	Rounds    []Round          `json:"rounds,omitempty"`
}

// compactCircuit is a version 2 circuit: fileCircuit with its path given either as Choices (a
// physical Beneš path from Src to Dst) or as Path, never both.
type compactCircuit struct {
	Src          int               `json:"src"`
	Dst          int               `json:"dst"`
	Bytes        int64             `json:"bytes"`
	Group        int               `json:"group"`
	Choices      *int64            `json:"choices"`
	Path         []benes.Traversal `json:"path"`
	PlannedStart *float64          `json:"planned_start,omitempty"`
	PlannedEnd   *float64          `json:"planned_end,omitempty"`
}

// circuit is the Circuit c holds (circuit i of the file, for errors) on fab (nil on a crossbar).
func (c *compactCircuit) circuit(fab *benes.Fabric, i int) (Circuit, error) {
	out := Circuit{Src: c.Src, Dst: c.Dst, Bytes: c.Bytes, Group: c.Group, PlannedStart: c.PlannedStart, PlannedEnd: c.PlannedEnd}
	if c.Choices == nil {
		out.Path = benes.FromOwned(c.Path)
		return out, nil
	}
	if c.Path != nil {
		return Circuit{}, fmt.Errorf("field circuits[%d]: both choices (%d) and a path are given; a circuit has one", i, *c.Choices)
	}
	p, err := compactChoicesPath(fab, i, c.Src, c.Dst, *c.Choices)
	if err != nil {
		return Circuit{}, err
	}
	out.Path = p
	return out, nil
}

// header is the Schedule of the file's header fields, with the schedule's own Version.
func (f *compactFile) header() *Schedule {
	return &Schedule{Version: FormatVersion, Algorithm: f.Algorithm, N: f.N, Ports: f.Ports, Fabric: f.Fabric,
		Mode: f.Mode, Params: f.Params, Rounds: f.Rounds}
}

// checkHeader validates the header (Validate without circuits and rounds) and returns the
// fabric that choices are decoded on, nil on a crossbar.
func checkHeader(s *Schedule) (*benes.Fabric, error) {
	bare := *s
	bare.Circuits, bare.Rounds = nil, nil
	if err := bare.Validate(); err != nil {
		return nil, err
	}
	return s.BenesFabric()
}

// decodeCompact is decodeSchedule for a version 2 file: decoded whole as decodeSchedule decodes
// version 1 (same errors for the same faults), then the header checked, then the circuits'
// choices turned into paths, then Validate's limits.
func decodeCompact(data []byte, name string) (*Schedule, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f compactFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, describe(data, err))
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		line, col := jsonerr.Position(data, end+int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n"))))
		return nil, fmt.Errorf("%s: line %d, column %d: trailing data after the schedule object", name, line, col)
	}
	s, err := f.schedule()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// schedule converts what was read and validates it.
func (f *compactFile) schedule() (*Schedule, error) {
	s := f.header()
	fab, err := checkHeader(s)
	if err != nil {
		return nil, err
	}
	if f.Circuits != nil {
		s.Circuits = make([]Circuit, len(f.Circuits))
	}
	for i := range f.Circuits {
		if s.Circuits[i], err = f.Circuits[i].circuit(fab, i); err != nil {
			return nil, err
		}
		f.Circuits[i].Path = nil
	}
	if _, err := validateEntries(s.Circuits, s.Rounds, 0, 0); err != nil {
		return nil, err
	}
	return s, nil
}
