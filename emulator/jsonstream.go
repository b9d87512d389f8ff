package emulator

import (
	"io"
	"strconv"

	"github.com/tetris-hil/tetris-hil/internal/jsonw"
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
func (e *jsonStream) float(f float64) { e.b = jsonw.AppendFloat(e.b, f) }
