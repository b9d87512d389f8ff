package emulator

import (
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
)

// flushAt is how much encoded text a stream gathers before handing it to its writer: enough that
// a timeline of millions of switch changes costs few writes, small enough never to matter in
// memory.
const flushAt = 32 << 10

// jsonStream appends JSON text to b and hands it to w in pieces of about flushAt bytes, so that
// run records and Chrome traces of millions of elements are written without their text ever being
// held whole. The first write error sticks and ends the writing.
type jsonStream struct {
	w   io.Writer
	b   []byte
	err error
}

func newJSONStream(w io.Writer) *jsonStream {
	return &jsonStream{w: w, b: make([]byte, 0, flushAt+4<<10)}
}

func (e *jsonStream) flush() {
	if e.err == nil && len(e.b) > 0 {
		_, e.err = e.w.Write(e.b)
	}
	e.b = e.b[:0]
}

// maybeFlush flushes once an element has taken the text past flushAt.
func (e *jsonStream) maybeFlush() {
	if len(e.b) >= flushAt {
		e.flush()
	}
}

func (e *jsonStream) str(s string)    { e.b = append(e.b, s...) }
func (e *jsonStream) int(v int)       { e.b = strconv.AppendInt(e.b, int64(v), 10) }
func (e *jsonStream) int64(v int64)   { e.b = strconv.AppendInt(e.b, v, 10) }
func (e *jsonStream) float(f float64) { e.b = appendJSONFloat(e.b, f) }

// appendJSONFloat appends f as encoding/json writes a float64: the shortest decimal that reads
// back exactly, in plain notation unless it is below 1e-6 or from 1e21 on, where the exponent
// form is used with no leading zero in the exponent (1e-7, not 1e-07). f must be finite
// (checkJSONFloat).
func appendJSONFloat(b []byte, f float64) []byte {
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

// checkJSONFloat returns the error json.Marshal gives for a float it cannot encode (NaN, ±Inf).
func checkJSONFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	return nil
}
