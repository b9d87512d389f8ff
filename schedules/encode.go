package schedules

import (
	"io"
	"slices"

	"github.com/tetris-hil/tetris-hil/internal/jsonw"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// WriteJSON writes the schedule file: exactly the bytes of json.MarshalIndent(s, "", " ")
// followed by a newline (what safefile.WriteJSON writes), produced circuit by circuit, so that a
// schedule of 512 ports (261 k circuits, a 250 MB file) is written without holding its text in
// memory: MarshalIndent needed four times the schedule's own size for it.
//
// As json.Marshal does, it refuses a NaN or infinite float with a *json.UnsupportedValueError
// naming the value; it checks every float before writing anything, so a refused schedule leaves
// nothing half-written on w.
func (s *Schedule) WriteJSON(w io.Writer) error {
	return s.write(w, s.Version, 0, (*scheduleEncoder).circuit, (*scheduleEncoder).round)
}

// write streams the file of the given version: the header, each circuit and each round through
// the version's own writers (k as for scheduleEncoder), after checking every float.
func (s *Schedule) write(w io.Writer, version, k int, circuit func(*scheduleEncoder, *Circuit), round func(*scheduleEncoder, *Round)) error {
	if err := s.checkFloats(); err != nil {
		return err
	}
	e := &scheduleEncoder{Stream: jsonw.NewStream(w), k: k}
	e.header(s, version)
	e.Str("\n },\n \"circuits\": ")
	jsonw.Array(e.Stream, s.Circuits, "\n ]", func(c *Circuit) { circuit(e, c) })
	if len(s.Rounds) > 0 {
		e.Str(",\n \"rounds\": ")
		jsonw.Array(e.Stream, s.Rounds, "\n ]", func(r *Round) { round(e, r) })
	}
	e.Str("\n}\n")
	e.Flush()
	return e.Err
}

// round writes a version 1 round, indented as MarshalIndent does.
func (e *scheduleEncoder) round(r *Round) {
	e.Str("\n  {\n   \"group\": ")
	e.Int(r.Group)
	e.Str(",\n   \"planned_duration\": ")
	e.Float(r.PlannedDuration)
	e.Str("\n  }")
}

// checkFloats returns the error json.Marshal gives for the first float it cannot encode, in the
// order it would meet them.
func (s *Schedule) checkFloats() error {
	if err := jsonw.CheckFloat(s.Params.BandwidthBytesPerSecond); err != nil {
		return err
	}
	if err := jsonw.CheckFloat(s.Params.ReconfigSeconds); err != nil {
		return err
	}
	for i := range s.Circuits {
		c := &s.Circuits[i]
		if c.PlannedStart != nil {
			if err := jsonw.CheckFloat(*c.PlannedStart); err != nil {
				return err
			}
		}
		if c.PlannedEnd != nil {
			if err := jsonw.CheckFloat(*c.PlannedEnd); err != nil {
				return err
			}
		}
	}
	for _, r := range s.Rounds {
		if err := jsonw.CheckFloat(r.PlannedDuration); err != nil {
			return err
		}
	}
	return nil
}

// scheduleEncoder writes a schedule's indented text through a jsonw.Stream.
type scheduleEncoder struct {
	*jsonw.Stream
	// k is the number of recursion levels of the Beneš fabric a version 2 file's choices are
	// written for (0 on a crossbar: no circuit's path is written as choices there).
	k int
}

// header writes the header fields up to the last params entry, with version as the file's.
func (e *scheduleEncoder) header(s *Schedule, version int) {
	e.Str("{\n \"version\": ")
	e.Int(version)
	e.Str(",\n \"algorithm\": ")
	e.Quote(s.Algorithm)
	e.Str(",\n \"n\": ")
	e.Int(s.N)
	e.Str(",\n \"ports\": ")
	e.Int(s.Ports)
	e.Str(",\n \"fabric\": ")
	e.Quote(string(s.Fabric))
	e.Str(",\n \"mode\": ")
	e.Quote(string(s.Mode))
	e.Str(",\n \"params\": {\n  \"bandwidth_bytes_per_second\": ")
	e.Float(s.Params.BandwidthBytesPerSecond)
	e.Str(",\n  \"reconfig_seconds\": ")
	e.Float(s.Params.ReconfigSeconds)
	if len(s.Params.Options) > 0 {
		// encoding/json writes a map's entries in the order of their keys.
		keys := make([]string, 0, len(s.Params.Options))
		for k := range s.Params.Options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.Str(",\n  \"options\": {")
		for i, k := range keys {
			if i > 0 {
				e.Str(",")
			}
			e.Str("\n   ")
			e.Quote(k)
			e.Str(": ")
			e.Quote(s.Params.Options[k])
		}
		e.Str("\n  }")
	}
}

func (e *scheduleEncoder) circuit(c *Circuit) {
	e.Str("\n  {\n   \"src\": ")
	e.Int(c.Src)
	e.Str(",\n   \"dst\": ")
	e.Int(c.Dst)
	e.Str(",\n   \"bytes\": ")
	e.Int64(c.Bytes)
	e.Str(",\n   \"group\": ")
	e.Int(c.Group)
	e.Str(",\n   \"path\": ")
	e.path(c.Path)
	if c.PlannedStart != nil {
		e.Str(",\n   \"planned_start\": ")
		e.Float(*c.PlannedStart)
	}
	if c.PlannedEnd != nil {
		e.Str(",\n   \"planned_end\": ")
		e.Float(*c.PlannedEnd)
	}
	e.Str("\n  }")
}

// path appends a path as MarshalIndent spreads benes.Traversal's [stage,switch,in,out] form over
// lines: one number per line.
func (e *scheduleEncoder) path(p benes.Path) {
	switch {
	case p.IsNil():
		e.Str("null")
		return
	case p.Len() == 0:
		e.Str("[]")
		return
	}
	e.Str("[")
	for i, t := range p.All() {
		if i > 0 {
			e.Str(",")
		}
		e.Str("\n    [\n     ")
		e.Int(t.Stage)
		e.Str(",\n     ")
		e.Int(t.Switch)
		e.Str(",\n     ")
		e.Int(t.In)
		e.Str(",\n     ")
		e.Int(t.Out)
		e.Str("\n    ]")
	}
	e.Str("\n   ]")
}
