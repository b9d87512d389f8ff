// Package jsonw holds the rules by which encoding/json writes numbers, for the encoders that
// write large files piece by piece (schedule files, run records, Chrome traces) and must give
// exactly the bytes json.Marshal would: one copy of those rules, so the encoders cannot drift
// apart.
package jsonw

import (
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
)

// AppendFloat appends f as encoding/json writes a float64: the shortest decimal that reads back
// exactly, in plain notation unless it is below 1e-6 or from 1e21 on, where the exponent form is
// used with no leading zero in the exponent (1e-7, not 1e-07). f must be finite (CheckFloat).
func AppendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// CheckFloat returns the error json.Marshal gives for a float64 it cannot encode (NaN, ±Inf),
// or nil.
func CheckFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	return nil
}

// flushAt is how much encoded text a Stream gathers before handing it to its writer: enough that
// a file of millions of elements costs few writes, small enough never to matter in memory.
const flushAt = 32 << 10

// Stream appends JSON text to B and hands it to its writer in pieces of about flushAt bytes, so
// that files of millions of elements are written without their text ever being held whole. The
// first write error sticks in Err and ends the writing; encoders may also set Err themselves.
type Stream struct {
	w   io.Writer
	B   []byte
	Err error
}

// NewStream returns a Stream writing to w.
func NewStream(w io.Writer) *Stream {
	return &Stream{w: w, B: make([]byte, 0, flushAt+4<<10)}
}

// Flush hands what is gathered to the writer (unless an error has stuck).
func (s *Stream) Flush() {
	if s.Err == nil && len(s.B) > 0 && s.w != nil {
		_, s.Err = s.w.Write(s.B)
	}
	s.B = s.B[:0]
}

// MaybeFlush flushes once an element has taken the text past flushAt.
func (s *Stream) MaybeFlush() {
	if len(s.B) >= flushAt {
		s.Flush()
	}
}

// Array appends xs as encoding/json writes a slice: null for a nil one, [] for an empty one,
// otherwise "[", the elements separated by ",", and closing (the newline and indent before the
// "]" when indented, then "]"). elem appends one element; the text is flushed after each, so
// that an array of millions of elements is never held whole.
func Array[T any](s *Stream, xs []T, closing string, elem func(*T)) {
	switch {
	case xs == nil:
		s.Str("null")
	case len(xs) == 0:
		s.Str("[]")
	default:
		s.Str("[")
		for i := range xs {
			if i > 0 {
				s.Str(",")
			}
			elem(&xs[i])
			s.MaybeFlush()
		}
		s.Str(closing)
	}
}

func (s *Stream) Str(x string)    { s.B = append(s.B, x...) }
func (s *Stream) Int(v int)       { s.B = strconv.AppendInt(s.B, int64(v), 10) }
func (s *Stream) Int64(v int64)   { s.B = strconv.AppendInt(s.B, v, 10) }
func (s *Stream) Float(f float64) { s.B = AppendFloat(s.B, f) }

// Quote appends x as a JSON string, escaped as encoding/json escapes it (HTML characters, invalid
// UTF-8).
func (s *Stream) Quote(x string) {
	q, _ := json.Marshal(x) // a string always marshals
	s.B = append(s.B, q...)
}
