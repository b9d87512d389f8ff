package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// ReadCSV reads one n×n CSV matrix (schedules.ReadCSV: comma or whitespace separated, optional
// header, # comments) as a one-matrix trace: layer 0, dispatch, with metadata for n GPUs only.
func ReadCSV(r io.Reader, name string, maxPorts int) (*Trace, error) {
	d, err := schedules.ReadCSV(r, name, maxPorts)
	if err != nil {
		return nil, err
	}
	return FromMatrices([][][]int64{d.Bytes}, LayoutLayers, name)
}

// WriteCSV writes one matrix as comma-separated rows of whole byte counts, with a comment line
// naming it (ReadCSV skips it), so that ReadCSV gives back exactly the same matrix.
func WriteCSV(w io.Writer, m *Matrix) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# tetris-hil trace matrix: %s; bytes from row GPU to column GPU\n", m.Label())
	for _, row := range m.Bytes {
		for j, v := range row {
			if j > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString(strconv.FormatInt(v, 10))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Layout says which layer and phase each matrix of a metadata-free file (CSV, .npy) is.
type Layout string

const (
	// LayoutLayers: matrix k is layer k's dispatch.
	LayoutLayers Layout = "layers"
	// LayoutPairs: matrices 2l and 2l+1 are layer l's dispatch and combine, the order Write and
	// WriteNPY use for a trace with both phases per layer.
	LayoutPairs Layout = "pairs"
)

// ParseLayout accepts "layers" or "pairs".
func ParseLayout(s string) (Layout, error) {
	switch Layout(s) {
	case LayoutLayers, LayoutPairs:
		return Layout(s), nil
	}
	return "", fmt.Errorf("unknown layout %q (want layers or pairs)", s)
}

// FromMatrices wraps bare matrices in a trace according to layout; source names the file.
func FromMatrices(ms [][][]int64, layout Layout, source string) (*Trace, error) {
	if layout == LayoutPairs && len(ms)%2 != 0 {
		return nil, fmt.Errorf("%s: layout pairs needs an even number of matrices (dispatch, combine per layer), got %d", source, len(ms))
	}
	t := &Trace{Version: Version, Meta: Meta{Source: source}}
	if len(ms) > 0 {
		t.Meta.GPUs = len(ms[0])
	}
	for k, b := range ms {
		m := Matrix{Layer: k, Phase: Dispatch, Bytes: b}
		if layout == LayoutPairs {
			m.Layer = k / 2
			if k%2 == 1 {
				m.Phase = Combine
			}
		}
		t.Matrices = append(t.Matrices, m)
	}
	return t, nil
}
