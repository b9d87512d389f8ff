package schedules

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/internal/jsonw"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// flushAt is how much encoded text WriteJSON gathers before handing it to its writer: enough
// that a 250 MB schedule costs a few thousand writes, small enough never to matter in memory.
const flushAt = 32 << 10

// WriteJSON writes the schedule file: exactly the bytes of json.MarshalIndent(s, "", " ")
// followed by a newline (what safefile.WriteJSON writes), produced circuit by circuit, so that a
// schedule of 512 ports (261 k circuits, a 250 MB file) is written without holding its text in
// memory: MarshalIndent needed four times the schedule's own size for it.
//
// As json.Marshal does, it refuses a NaN or infinite float with a *json.UnsupportedValueError
// naming the value; it checks every float before writing anything, so a refused schedule leaves
// nothing half-written on w.
func (s *Schedule) WriteJSON(w io.Writer) error {
	if err := s.checkFloats(); err != nil {
		return err
	}
	e := &scheduleEncoder{w: w, b: make([]byte, 0, flushAt+4<<10)}
	e.header(s)
	e.str("\n },\n \"circuits\": ")
	switch {
	case s.Circuits == nil:
		e.str("null")
	case len(s.Circuits) == 0:
		e.str("[]")
	default:
		e.str("[")
		for i := range s.Circuits {
			if i > 0 {
				e.str(",")
			}
			e.circuit(&s.Circuits[i])
			if len(e.b) >= flushAt {
				e.flush()
			}
		}
		e.str("\n ]")
	}
	if len(s.Rounds) > 0 {
		e.str(",\n \"rounds\": [")
		for i, r := range s.Rounds {
			if i > 0 {
				e.str(",")
			}
			e.str("\n  {\n   \"group\": ")
			e.int(r.Group)
			e.str(",\n   \"planned_duration\": ")
			e.float(r.PlannedDuration)
			e.str("\n  }")
			if len(e.b) >= flushAt {
				e.flush()
			}
		}
		e.str("\n ]")
	}
	e.str("\n}\n")
	e.flush()
	return e.err
}

// checkFloats returns the error json.Marshal gives for the first float it cannot encode, in the
// order it would meet them.
func (s *Schedule) checkFloats() error {
	if err := checkFloat(s.Params.BandwidthBytesPerSecond); err != nil {
		return err
	}
	if err := checkFloat(s.Params.ReconfigSeconds); err != nil {
		return err
	}
	for i := range s.Circuits {
		c := &s.Circuits[i]
		if c.PlannedStart != nil {
			if err := checkFloat(*c.PlannedStart); err != nil {
				return err
			}
		}
		if c.PlannedEnd != nil {
			if err := checkFloat(*c.PlannedEnd); err != nil {
				return err
			}
		}
	}
	for _, r := range s.Rounds {
		if err := checkFloat(r.PlannedDuration); err != nil {
			return err
		}
	}
	return nil
}

func checkFloat(f float64) error { return jsonw.CheckFloat(f) }

// scheduleEncoder appends the indented text to b and hands it to w in pieces of about flushAt
// bytes; the first write error sticks and ends the writing.
type scheduleEncoder struct {
	w   io.Writer
	b   []byte
	err error
}

func (e *scheduleEncoder) flush() {
	if e.err == nil && len(e.b) > 0 {
		_, e.err = e.w.Write(e.b)
	}
	e.b = e.b[:0]
}

func (e *scheduleEncoder) str(s string) { e.b = append(e.b, s...) }
func (e *scheduleEncoder) int(v int)    { e.b = strconv.AppendInt(e.b, int64(v), 10) }

// float appends f as encoding/json writes a float64 (jsonw.AppendFloat).
func (e *scheduleEncoder) float(f float64) { e.b = jsonw.AppendFloat(e.b, f) }

// quote appends s as a JSON string, escaped as encoding/json escapes it (HTML characters, invalid
// UTF-8); only the header's few strings go through it.
func (e *scheduleEncoder) quote(s string) {
	q, _ := json.Marshal(s) // a string always marshals
	e.b = append(e.b, q...)
}

func (e *scheduleEncoder) header(s *Schedule) {
	e.str("{\n \"version\": ")
	e.int(s.Version)
	e.str(",\n \"algorithm\": ")
	e.quote(s.Algorithm)
	e.str(",\n \"n\": ")
	e.int(s.N)
	e.str(",\n \"ports\": ")
	e.int(s.Ports)
	e.str(",\n \"fabric\": ")
	e.quote(string(s.Fabric))
	e.str(",\n \"mode\": ")
	e.quote(string(s.Mode))
	e.str(",\n \"params\": {\n  \"bandwidth_bytes_per_second\": ")
	e.float(s.Params.BandwidthBytesPerSecond)
	e.str(",\n  \"reconfig_seconds\": ")
	e.float(s.Params.ReconfigSeconds)
	if len(s.Params.Options) > 0 {
		// encoding/json writes a map's entries in the order of their keys.
		keys := make([]string, 0, len(s.Params.Options))
		for k := range s.Params.Options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.str(",\n  \"options\": {")
		for i, k := range keys {
			if i > 0 {
				e.str(",")
			}
			e.str("\n   ")
			e.quote(k)
			e.str(": ")
			e.quote(s.Params.Options[k])
		}
		e.str("\n  }")
	}
}

func (e *scheduleEncoder) circuit(c *Circuit) {
	e.str("\n  {\n   \"src\": ")
	e.int(c.Src)
	e.str(",\n   \"dst\": ")
	e.int(c.Dst)
	e.str(",\n   \"bytes\": ")
	e.b = strconv.AppendInt(e.b, c.Bytes, 10)
	e.str(",\n   \"group\": ")
	e.int(c.Group)
	e.str(",\n   \"path\": ")
	e.path(c.Path)
	if c.PlannedStart != nil {
		e.str(",\n   \"planned_start\": ")
		e.float(*c.PlannedStart)
	}
	if c.PlannedEnd != nil {
		e.str(",\n   \"planned_end\": ")
		e.float(*c.PlannedEnd)
	}
	e.str("\n  }")
}

// path appends a path as MarshalIndent spreads benes.Traversal's [stage,switch,in,out] form over
// lines: one number per line.
func (e *scheduleEncoder) path(p benes.Path) {
	switch {
	case p.IsNil():
		e.str("null")
		return
	case p.Len() == 0:
		e.str("[]")
		return
	}
	e.str("[")
	for i, t := range p.All() {
		if i > 0 {
			e.str(",")
		}
		e.str("\n    [\n     ")
		e.int(t.Stage)
		e.str(",\n     ")
		e.int(t.Switch)
		e.str(",\n     ")
		e.int(t.In)
		e.str(",\n     ")
		e.int(t.Out)
		e.str("\n    ]")
	}
	e.str("\n   ]")
}
