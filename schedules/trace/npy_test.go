package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func readNPYFile(t *testing.T, name string, maxPorts int) ([][][]int64, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "npy", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ReadNPY(f, name, maxPorts)
}

// The files in testdata/npy were written by NumPy itself (make.py there).
func TestReadNPYFromNumPy(t *testing.T) {
	d := [][]int64{{0, 10, 20}, {5, 0, 0}, {7, 1, 0}}
	one, pair := [][][]int64{d}, [][][]int64{d, Transpose(d)}
	for _, c := range []struct {
		file string
		want [][][]int64
	}{
		{"i8_2d.npy", one}, {"i4_2d.npy", one}, {"u2_2d.npy", one}, {"u1_2d.npy", one}, {"f4_2d.npy", one},
		{"v2_i8_2d.npy", one}, {"pair_i8_3d.npy", pair}, {"f8_3d.npy", pair},
	} {
		got, err := readNPYFile(t, c.file, 0)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %v, want %v", c.file, got, c.want)
		}
	}
}

func TestReadNPYRejects(t *testing.T) {
	for _, c := range []struct {
		file string
		max  int
		want []string
	}{
		{"fortran.npy", 0, []string{"fortran.npy: header field 'fortran_order' is True"}},
		{"bigendian.npy", 0, []string{"bigendian.npy: header field 'descr': dtype \">i8\" is big-endian"}},
		{"onedim.npy", 0, []string{"header field 'shape' has 1 dimensions"}},
		{"nonsquare.npy", 0, []string{"header field 'shape' (2, 3): matrix is not square"}},
		{"nan.npy", 0, []string{"nan.npy: matrix 0, row 0, column 1: value NaN is NaN"}},
		{"inf.npy", 0, []string{"inf.npy: matrix 0, row 1, column 0: value +Inf is infinite"}},
		{"negative.npy", 0, []string{"negative.npy: matrix 0, row 1, column 0: value -3 is negative"}},
		{"fraction.npy", 0, []string{"fraction.npy: matrix 0, row 0, column 1: value 1.5 is not a whole number of bytes"}},
		{"complex.npy", 0, []string{`dtype "<c16" is not supported`}},
		{"empty.npy", 0, []string{"empty.npy: header field 'shape': empty matrix (n = 0)"}},
		{"truncated.npy", 0, []string{"truncated.npy: truncated file: shape [3 3] of <i8 needs 72 data bytes, 67 present"}},
		{"trailing.npy", 0, []string{"trailing.npy: trailing garbage: 4 bytes after the 72 data bytes"}},
		{"i8_2d.npy", 2, []string{"n = 3 is above the port limit of 2"}},
	} {
		_, err := readNPYFile(t, c.file, c.max)
		wantErr(t, err, c.want...)
	}
}

func TestReadNPYRejectsBadHeaders(t *testing.T) {
	hdr := func(h string) []byte {
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), 0)
		return append(b, h...)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"no magic", []byte("PK\x03\x04"), "no \\x93NUMPY magic"},
		{"short preamble", []byte("\x93NUMPY\x01"), "truncated file: 7 bytes"},
		{"version 9", []byte("\x93NUMPY\x09\x00\x00\x00"), "unknown .npy format version 9.0"},
		{"header cut", append([]byte("\x93NUMPY\x01\x00\x50\x00"), "{'descr'"...), "header says 80 bytes, only 8 follow"},
		{"unknown key", hdr("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), 'x': 1}\n"), `unknown key "x"`},
		{"missing shape", hdr("{'descr': '<i8', 'fortran_order': False}\n"), `key "shape" is missing`},
		{"not a dict", hdr("['descr']\n"), "is not a Python dict"},
		{"bad bool", hdr("{'descr': '<i8', 'fortran_order': Maybe, 'shape': (1, 1)}\n"), "expected True or False"},
		{"bad dim", hdr("{'descr': '<i8', 'fortran_order': False, 'shape': (1, x)}\n"), "bad dimension"},
		{"huge shape", hdr("{'descr': '<i8', 'fortran_order': False, 'shape': (999999999, 4096, 4096)}\n"), "truncated file"},
		{"no matrices", hdr("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 2, 2)}\n"), "no matrices (m = 0)"},
		{"trailing header text", hdr("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1)} x\n"), "trailing text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadNPY(bytes.NewReader(c.in), "h.npy", 0)
			wantErr(t, err, "h.npy: ", c.want)
		})
	}
}

// WriteNPY must produce exactly what np.save writes for the same int64 array.
func TestWriteNPYMatchesNumPy(t *testing.T) {
	d := [][]int64{{0, 10, 20}, {5, 0, 0}, {7, 1, 0}}
	for _, c := range []struct {
		file string
		ms   [][][]int64
	}{{"i8_2d.npy", [][][]int64{d}}, {"pair_i8_3d.npy", [][][]int64{d, Transpose(d)}}} {
		var b bytes.Buffer
		if err := WriteNPY(&b, c.ms); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "npy", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("WriteNPY differs from NumPy's %s:\n got %q\nwant %q", c.file, b.Bytes(), want)
		}
	}
}
