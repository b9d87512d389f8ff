package trace

import (
	"strings"
	"testing"
)

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
