package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// Every reader refuses loads that would overflow int64 or leave float64's exact range, and says
// what was wrong in one short line.
func TestReadersHostile(t *testing.T) {
	const max = "9223372036854775807"
	row := "[" + max + ", " + max + ", " + max + "]"
	overflowJSON := `{"version": 1, "meta": {"gpus": 3}, "matrices": [{"layer": 0, "phase": "dispatch", "bytes": [` + row + `, ` + row + `, ` + row + `]}]}`
	sub := func(old, new string) string { return strings.Replace(validJSON, old, new, 1) }
	var npy bytes.Buffer
	WriteNPY(&npy, [][][]int64{{{0, 1 << 62, 1 << 62}, {1 << 62, 0, 0}, {0, 0, 0}}})
	for _, c := range []struct {
		name, file string
		in         []byte
		want       string
	}{
		{"json 3×3 of MaxInt64", "t.json", []byte(overflowJSON), "t.json: matrices[0].bytes: entry [0][0] = 9223372036854775807 brings the matrix total above the limit of 9007199254740992 bytes (2^53)"},
		{"csv 3×3 of MaxInt64", "t.csv", []byte(strings.Repeat(max+","+max+","+max+"\n", 3)), "t.csv: entry [0][0] = 9223372036854775807 brings the matrix total above"},
		{"npy sum above 2^53", "t.npy", npy.Bytes(), "t.npy: matrices[0].bytes: entry [0][1] = 4611686018427387904 brings the matrix total above"},
		{"json gpus as a string", "t.json", []byte(sub(`"gpus": 2`, `"gpus": "2"`)), `t.json: line 1, column 36: field meta.gpus: value "2" is a JSON string, want an integer (int)`},
		{"json bytes as an object", "t.json", []byte(sub(`"bytes": [[0, 1], [2, 0]]`, `"bytes": {"a": 1}`)), `t.json: matrices[0].bytes: value {"a": 1} is not an array of rows`},
		{"json row as a number", "t.json", []byte(sub(`[[0, 1], [2, 0]]`, `[7, [2, 0]]`)), `t.json: matrices[0].bytes[0]: value 7 is not an array of values`},
		{"json huge string cell", "t.json", []byte(sub(`[2, 0]`, `["`+strings.Repeat("x", 5000)+`", 0]`)), `t.json: matrices[0].bytes[1][0]: value "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... is not a number`},
		{"json meta as an array", "t.json", []byte(sub(`"meta": {"gpus": 2}`, `"meta": []`)), "field meta: a JSON array, want an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(path, c.in, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, LoadOptions{})
			if err == nil {
				t.Fatalf("accepted, want an error containing %q", c.want)
			}
			msg := strings.ReplaceAll(err.Error(), path, c.file)
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Fatalf("error %q, want one short line containing %q", msg, c.want)
			}
			t.Logf("%s", msg)
			// Parse, on bytes already read, says the same.
			if _, perr := Parse(c.in, path, LoadOptions{}); perr == nil || perr.Error() != err.Error() {
				t.Errorf("Parse says %v, Load says %v", perr, err)
			}
		})
	}
}

// A .npy header above NumPy's max_header_size is refused without reading or echoing it; a long
// malformed one is quoted only in part.
func TestReadNPYLongHeaders(t *testing.T) {
	v2 := func(h string) []byte {
		b := append([]byte("\x93NUMPY\x02\x00"), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(h)))
		return append(b, h...)
	}
	long := "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), 'pad': '" + strings.Repeat("z", 100_000) + "'}\n"
	_, err := ReadNPY(bytes.NewReader(v2(long)), "h.npy", 0)
	wantErr(t, err, "h.npy: header is 100069 bytes, above the limit of 10000 bytes (NumPy's max_header_size)")
	if len(err.Error()) > 200 {
		t.Errorf("error is %d bytes long", len(err.Error()))
	}
	bad := "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), " + strings.Repeat(" ", 9000) + "x}\n"
	_, err = ReadNPY(bytes.NewReader(v2(bad)), "h.npy", 0)
	wantErr(t, err, "h.npy: header: expected a quoted string at offset")
	if len(err.Error()) > 300 {
		t.Errorf("error echoes the header: %d bytes", len(err.Error()))
	}
	t.Logf("%v", err)
}

// hidden × dtype bytes that overflow are refused, not turned into an all-zero trace.
func TestImportRoutingHiddenOverflow(t *testing.T) {
	o := RoutingOptions{GPUs: 2, Experts: 2, Hidden: 1 << 62, DtypeBytes: 4, Placement: Placement{Name: "contiguous", ExpertGPUs: [][]int{{0}, {1}}}}
	_, err := ImportRouting(strings.NewReader(`{"layer": 0, "experts": [1], "source": 0}`+"\n"), "r.jsonl", o)
	if !errors.Is(err, schedules.ErrLimit) {
		t.Fatalf("error %v, want the byte limit", err)
	}
	wantErr(t, err, "hidden = 4611686018427387904 × dtype bytes = 4 per token copy is above the limit of 9007199254740992 bytes")
	t.Logf("%v", err)
	o.Hidden = 1 << 50
	_, err = ImportRouting(strings.NewReader(strings.Repeat(`{"layer": 0, "experts": [0, 1], "source": 0}`+"\n", 3)), "r.jsonl", o)
	wantErr(t, err, "r.jsonl: 6 token copies × 4503599627370496 bytes")
}

// Loading a large all-zero trace holds its matrices about once: it used to take a
// json.RawMessage per cell (32 bytes and an allocation each) plus two copies of the file.
func TestLoadAllocatesAboutTheMatrices(t *testing.T) {
	n := 512
	ms := [][][]int64{newSquare(n), newSquare(n), newSquare(n)}
	tr, _ := FromMatrices(ms, LayoutLayers, "zeros")
	b, _ := tr.Marshal()
	path := filepath.Join(t.TempDir(), "zeros.json")
	os.WriteFile(path, b, 0o644)
	matrices := uint64(3 * n * n * 8)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Load(path, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("file %d bytes, matrices %d bytes, allocated %d bytes (%.2f× the matrices)", len(b), matrices, alloc, float64(alloc)/float64(matrices))
	if alloc > 3*matrices {
		t.Errorf("Load allocated %d bytes for %d bytes of matrices", alloc, matrices)
	}
}
