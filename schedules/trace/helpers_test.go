package trace

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// golden compares got with testdata/golden/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func intp(v int) *int { return &v }

// small is a hand-made 3-GPU trace with both phases of one layer.
func small() *Trace {
	d := [][]int64{{0, 10, 20}, {5, 0, 0}, {7, 1, 0}}
	return &Trace{Version: Version, Meta: Meta{Model: "toy", GPUs: 3, HiddenSize: 4, DtypeBytes: 2, TopK: 1, Experts: 3,
		Placement: "contiguous", ExpertGPUs: [][]int{{0}, {1}, {2}}, Source: "hand-made \"test\"", Params: map[string]string{"b": "2", "a": "1"}},
		Matrices: []Matrix{
			{Layer: 0, Phase: Dispatch, Iteration: intp(3), Dataset: "unit", Bytes: d},
			{Layer: 0, Phase: Combine, Iteration: intp(3), Dataset: "unit", Bytes: Transpose(d)},
		}}
}
