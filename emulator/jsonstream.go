package emulator

import (
	"io"

	"github.com/tetris-hil/tetris-hil/internal/jsonw"
)

// jsonStream is the buffered JSON writer (jsonw.Stream) that run records and Chrome traces are
// written through, so that files of millions of elements never have their text held whole; the
// record's own element writers hang off it.
type jsonStream struct{ *jsonw.Stream }

func newJSONStream(w io.Writer) *jsonStream { return &jsonStream{jsonw.NewStream(w)} }
