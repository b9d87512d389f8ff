package trace

import (
	"errors"
	"fmt"
	"io"
)

// Errors of Export, so that a caller can say which of its inputs to change.
var (
	// ErrOneMatrix: CSV holds exactly one matrix.
	ErrOneMatrix = errors.New("CSV holds exactly one matrix")
	// ErrExportFormat: the format is not csv, npy or json.
	ErrExportFormat = errors.New("export format is not csv, npy or json")
)

// Export writes the matrices of t at indices, in that order, as format: "csv" (exactly one
// matrix), "npy" (one little-endian int64 array, n×n for one matrix, m×n×n for several) or
// "json" (a canonical trace with t's metadata and those matrices).
func (t *Trace) Export(w io.Writer, format string, indices []int) error {
	for _, k := range indices {
		if k < 0 || k >= len(t.Matrices) {
			return fmt.Errorf("trace export: matrix %d: the trace holds %d", k, len(t.Matrices))
		}
	}
	switch format {
	case "csv":
		if len(indices) != 1 {
			return fmt.Errorf("trace export: %w, and %d are selected", ErrOneMatrix, len(indices))
		}
		return WriteCSV(w, &t.Matrices[indices[0]])
	case "npy":
		ms := make([][][]int64, len(indices))
		for i, k := range indices {
			ms[i] = t.Matrices[k].Bytes
		}
		return WriteNPY(w, ms)
	case "json":
		sub := *t
		sub.Matrices = make([]Matrix, len(indices))
		for i, k := range indices {
			sub.Matrices[i] = t.Matrices[k]
		}
		return sub.Write(w)
	}
	return fmt.Errorf("trace export: %w: %q", ErrExportFormat, format)
}
