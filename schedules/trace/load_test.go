package trace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDetectFormat(t *testing.T) {
	for _, c := range []struct {
		path, head string
		want       Format
	}{
		{"a.json", "", FormatJSON}, {"a.CSV", "", FormatCSV}, {"a.npy", "", FormatNPY}, {"a.jsonl", "", FormatRouting},
		{"a.dat", "\x93NUMPY\x01\x00", FormatNPY},
		{"a.dat", `{"layer": 0, "experts": [1, 2]}` + "\n", FormatRouting},
		{"a.dat", "{\n  \"version\": 1,", FormatJSON},
		{"a.dat", "0,1\n1,0\n", FormatCSV},
		{"routing.json", `{"layer": 0, "experts": [1, 2]}` + "\n", FormatRouting},
	} {
		if got := DetectFormat(c.path, []byte(c.head)); got != c.want {
			t.Errorf("DetectFormat(%q, %q) = %s, want %s", c.path, c.head, got, c.want)
		}
	}
}

func TestLoadEveryFormat(t *testing.T) {
	dir := t.TempDir()
	orig := small()
	j, _ := orig.Marshal()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv, _ := os.ReadFile(filepath.Join("testdata", "golden", "small-0.csv"))
	npy, _ := os.ReadFile(filepath.Join("testdata", "npy", "pair_i8_3d.npy"))
	for _, c := range []struct {
		path string
		o    LoadOptions
		n    int
	}{
		{write("t.json", j), LoadOptions{}, 2},
		{write("m.csv", csv), LoadOptions{}, 1},
		{write("p.npy", npy), LoadOptions{Layout: LayoutPairs}, 2},
		{write("noext", npy), LoadOptions{}, 2},
	} {
		tr, err := Load(c.path, c.o)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if len(tr.Matrices) != c.n || tr.Matrices[0].Bytes[0][2] != 20 {
			t.Errorf("%s: %d matrices, [0][0][2] = %d; want %d and 20", c.path, len(tr.Matrices), tr.Matrices[0].Bytes[0][2], c.n)
		}
	}
	_, err := Load(write("r.jsonl", []byte(`{"layer": 0, "experts": [1]}`)), LoadOptions{})
	if !errors.Is(err, ErrNeedsImport) {
		t.Errorf("routing JSONL: error %v, want ErrNeedsImport", err)
	}
	wantErr(t, err, "r.jsonl: token-routing JSONL must be imported first", "trace import --format routing-jsonl")
	_, err = Load(write("odd.npy", npy[:len(npy)-8]), LoadOptions{Layout: LayoutPairs})
	wantErr(t, err, "odd.npy: truncated file")
	_, err = Parse(csv, "m.csv", LoadOptions{Layout: LayoutPairs})
	wantErr(t, err, "m.csv: a CSV file holds one matrix")
	one, _ := os.ReadFile(filepath.Join("testdata", "npy", "i8_2d.npy"))
	_, err = Parse(one, "one.npy", LoadOptions{Layout: LayoutPairs})
	wantErr(t, err, "one.npy: layout pairs needs an even number of matrices")
}
