package trace

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

func TestWriteGoldenAndReadBack(t *testing.T) {
	tr := small()
	b, err := tr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/golden/"+"small.json", b)
	back, err := Read(bytes.NewReader(b), "small.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, tr) {
		t.Errorf("read back %+v, want %+v", back, tr)
	}
	again, _ := back.Marshal()
	if !bytes.Equal(again, b) {
		t.Error("writing the read-back trace gave different bytes")
	}
}

// validJSON is a minimal trace that the bad-input cases below break one thing at a time.
const validJSON = `{"version": 1, "meta": {"gpus": 2}, "matrices": [
{"layer": 0, "phase": "dispatch", "bytes": [[0, 1], [2, 0]]}]}`

func TestReadAcceptsWholeFloats(t *testing.T) {
	tr, err := Read(strings.NewReader(strings.Replace(validJSON, "[2, 0]", "[2e3, 4096.0]", 1)), "f.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Matrices[0].Bytes[1]; got[0] != 2000 || got[1] != 4096 {
		t.Errorf("row 1 = %v, want [2000 4096]", got)
	}
}

func TestReadRejects(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(validJSON, old, new, 1) }
	for _, c := range []struct {
		name, in string
		max      int
		want     []string
	}{
		{"NaN", sub("[2, 0]", "[NaN, 0]"), 0, []string{"bad.json: line 2, column", "malformed JSON", "invalid character 'N'"}},
		{"Inf", sub("[2, 0]", "[1e999, 0]"), 0, []string{"matrices[0].bytes[1][0]", "value 1e999 is infinite"}},
		{"negative", sub("[2, 0]", "[-2, 0]"), 0, []string{"matrices[0].bytes[1][0]", "value -2 is negative"}},
		{"fractional", sub("[2, 0]", "[2.5, 0]"), 0, []string{"matrices[0].bytes[1][0]", "value 2.5 is not a whole number of bytes"}},
		{"tiny fraction", sub("[2, 0]", "[1e-400, 0]"), 0, []string{"value 1e-400 is not a whole number of bytes"}},
		{"too large", sub("[2, 0]", "[1e19, 0]"), 0, []string{"value 1e19 is too large"}},
		{"string", sub("[2, 0]", `["x", 0]`), 0, []string{`matrices[0].bytes[1][0]: value "x" is not a number`}},
		{"null", sub("[2, 0]", `[null, 0]`), 0, []string{`matrices[0].bytes[1][0]: value null is not a number`}},
		{"ragged", sub("[2, 0]", "[2]"), 0, []string{"matrices[0].bytes[1] has 1 values, want 2 (ragged or non-square matrix)"}},
		{"non-square", sub("[[0, 1], [2, 0]]", "[[0, 1, 2], [2, 0, 1]]"), 0, []string{"matrices[0].bytes[0] has 3 values, want 2"}},
		{"n = 0", sub("[[0, 1], [2, 0]]", "[]"), 0, []string{"matrices[0].bytes: empty matrix (n = 0)"}},
		{"above limit", validJSON, 1, []string{"n = 2 is above the port limit of 1", "--max-ports"}},
		{"unknown version", sub(`"version": 1`, `"version": 2`), 0, []string{"version 2 is not supported"}},
		{"missing version", sub(`"version": 1,`, ``), 0, []string{`field "version" is missing`}},
		{"unknown phase", sub(`"dispatch"`, `"forward"`), 0, []string{`matrices[0].phase: unknown phase "forward"`}},
		{"negative layer", sub(`"layer": 0`, `"layer": -1`), 0, []string{"matrices[0].layer = -1 is negative"}},
		{"fractional layer", sub(`"layer": 0`, `"layer": 0.5`), 0, []string{"matrices[0].layer = 0.5 is not a whole number"}},
		{"trailing garbage", validJSON + "\n}x", 0, []string{"line 3, column 1", "trailing data"}},
		{"second object", validJSON + validJSON, 0, []string{"trailing data"}},
		{"truncated", validJSON[:len(validJSON)-10], 0, []string{"line 2", "truncated file"}},
		{"unknown field", sub(`"gpus": 2`, `"gpus": 2, "gpu": 2`), 0, []string{`unknown field "gpu"`}},
		{"gpus mismatch", sub(`"gpus": 2`, `"gpus": 3`), 0, []string{"meta.gpus = 3 but the matrices are 2×2"}},
		{"no meta", `{"version": 1, "matrices": []}`, 0, []string{`field "meta" is missing`}},
		{"no matrices", `{"version": 1, "meta": {"gpus": 2}, "matrices": []}`, 0, []string{"the trace holds no matrices"}},
		{"bad expert gpu", sub(`"gpus": 2`, `"gpus": 2, "expert_gpus": [[0], [5]]`), 0, []string{"meta.expert_gpus[1][0] = 5 is not a GPU in [0, 2)"}},
		{"top-k above experts", sub(`"gpus": 2`, `"gpus": 2, "experts": 2, "top_k": 3`), 0, []string{"meta.top_k = 3 is above meta.experts = 2"}},
		{"empty file", "", 0, []string{"bad.json", "truncated file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in), "bad.json", c.max)
			wantErr(t, err, c.want...)
			if err != nil && !strings.HasPrefix(err.Error(), "bad.json: ") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncd\ne")
	for _, c := range []struct {
		off       int64
		line, col int
	}{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {6, 3, 1}, {7, 3, 2}, {99, 3, 2}} {
		if l, col := position(data, c.off); l != c.line || col != c.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
}
