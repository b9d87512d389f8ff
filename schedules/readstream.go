package schedules

import (
	"encoding/json"
	"io"
)

// readWatch passes reads through and keeps the first error other than io.EOF: a file that cannot
// be read is reported as such, not as the JSON error the decoder makes of it.
type readWatch struct {
	r   io.Reader
	err error
}

func (w *readWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// streamSchedule decodes a schedule file from r as it is read: the header fields whole, the
// circuits one at a time, each compacted (benes.FromOwned) before the next is read, so that
// memory holds the schedule and one circuit's text, never the file's. It accepts only the plain
// form WriteJSON writes and hand edits keep: an object whose keys are Schedule's JSON names,
// spelled exactly, each once, and nothing after it. Anything else (an unknown, repeated or
// differently cased key, a syntax or type error, trailing data) gives ok = false, and
// ReadSchedule decodes the whole text instead, so that such a file gets exactly that decoder's
// result or error.
func streamSchedule(r io.Reader) (s *Schedule, ok bool) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var f scheduleFile
	s = &Schedule{}
	seen := map[string]bool{}
	// compact: the circuits were read as version 2 ones (the version came before them).
	compact := false
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey || seen[key] {
			return nil, false
		}
		seen[key] = true
		var field any
		switch key {
		case "version":
			field = &f.Version
		case "algorithm":
			field = &f.Algorithm
		case "n":
			field = &f.N
		case "ports":
			field = &f.Ports
		case "fabric":
			field = &f.Fabric
		case "mode":
			field = &f.Mode
		case "params":
			field = &f.Params
		case "rounds":
			field = &f.Rounds
		case "circuits":
			if f.Version == CompactFormatVersion {
				compact = true
				if !streamCompactCircuits(dec, &f, s) {
					return nil, false
				}
			} else if !streamCircuits(dec, s) {
				return nil, false
			}
			continue
		default:
			return nil, false
		}
		if dec.Decode(field) != nil {
			return nil, false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	// Any other version, or a version 2 file whose circuits came before its version, is left to
	// the whole-file decoder: its errors, and its decoding of the circuits.
	if f.Version != FormatVersion && !compact {
		return nil, false
	}
	circuits := s.Circuits
	*s = *f.schedule()
	s.Circuits = circuits
	s.Version = FormatVersion
	return s, true
}

// streamCompactCircuits is streamCircuits for a version 2 file: each circuit's choices become
// its path as it is read, on the fabric of the header read so far, which must already be valid
// (as it is in every file writeCompact writes); otherwise, and on any fault in a circuit, it
// returns false and the whole-file decoder reports.
func streamCompactCircuits(dec *json.Decoder, f *scheduleFile, s *Schedule) bool {
	h := f.schedule()
	h.Version = FormatVersion
	fab, err := checkHeader(h)
	if err != nil {
		return false
	}
	return streamArray(dec, s, func(i int) (Circuit, bool) {
		var c compactCircuit
		if dec.Decode(&c) != nil {
			return Circuit{}, false
		}
		cc, err := c.circuit(fab, i)
		return cc, err == nil
	})
}

// streamCircuits decodes the value of "circuits" into s.Circuits: null, or an array read one
// circuit at a time.
func streamCircuits(dec *json.Decoder, s *Schedule) bool {
	return streamArray(dec, s, func(int) (Circuit, bool) {
		var c fileCircuit
		if dec.Decode(&c) != nil {
			return Circuit{}, false
		}
		return c.circuit(), true
	})
}

// streamArray reads the value of "circuits" into s.Circuits, each element by next (given its
// index): null leaves no circuits, as the whole-file decoder does; false at any fault.
func streamArray(dec *json.Decoder, s *Schedule, next func(i int) (Circuit, bool)) bool {
	t, err := dec.Token()
	if err != nil {
		return false
	}
	if t == nil {
		return true
	}
	if t != json.Delim('[') {
		return false
	}
	s.Circuits = []Circuit{}
	for i := 0; dec.More(); i++ {
		c, ok := next(i)
		if !ok {
			return false
		}
		s.Circuits = append(s.Circuits, c)
	}
	t, err = dec.Token()
	return err == nil && t == json.Delim(']')
}
