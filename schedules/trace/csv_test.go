package trace

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

func TestReadCSV(t *testing.T) {
	in := "gpu0,gpu1,gpu2\n0,10,20\n5 0 0\n7\t1\t0\n"
	tr, err := ReadCSV(strings.NewReader(in), "m.csv", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{0, 10, 20}, {5, 0, 0}, {7, 1, 0}}
	if len(tr.Matrices) != 1 || !reflect.DeepEqual(tr.Matrices[0].Bytes, want) {
		t.Fatalf("matrices = %+v, want one %v", tr.Matrices, want)
	}
	if m := tr.Matrices[0]; m.Layer != 0 || m.Phase != Dispatch || tr.Meta.GPUs != 3 || tr.Meta.Source != "m.csv" {
		t.Errorf("got layer %d phase %s gpus %d source %q", m.Layer, m.Phase, tr.Meta.GPUs, tr.Meta.Source)
	}
}

func TestReadCSVRejects(t *testing.T) {
	for _, c := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"NaN", "0,1\nNaN,0\n", 0, "bad.csv: line 2, column 1: value \"NaN\" is NaN"},
		{"Inf", "0,1\n1,Inf\n", 0, "bad.csv: line 2, column 2: value \"Inf\" is out of range"},
		{"negative", "0,-1\n1,0\n", 0, "bad.csv: line 1, column 2: value \"-1\" is negative"},
		{"fractional", "0,1.5\n1,0\n", 0, "bad.csv: line 1, column 2: value \"1.5\" is not a whole number"},
		{"ragged", "0,1\n1\n", 0, "bad.csv: line 2 has 1 values, earlier rows have 2 (ragged matrix)"},
		{"non-square", "0,1,2\n1,0,2\n", 0, "bad.csv: matrix is 2×3, not square"},
		{"n = 0", "# nothing\n", 0, "bad.csv: no matrix rows (n = 0)"},
		{"above limit", "0,1\n1,0\n", 1, "bad.csv: line 1 has 2 columns, above the limit of 1 ports"},
		{"trailing garbage", "0,1\n1,0\nxyz\n", 0, "bad.csv: line 3, column 1: value \"xyz\" is not a number"},
		{"truncated", "0,1,2\n1,0,2\n3,", 0, "bad.csv: line 3: column 2 is empty"},
		{"truncated row", "0,1,2\n1,0,2\n3,4\n", 0, "bad.csv: line 3 has 2 values, earlier rows have 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.in), "bad.csv", c.max)
			wantErr(t, err, c.want)
		})
	}
}

func TestWriteCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, &small().Matrices[0]); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/golden/"+"small-0.csv", b.Bytes())
}

// Canonical → CSV → canonical and canonical → .npy → canonical give back the same matrices,
// layers and phases, entry for entry.
func TestRoundTrips(t *testing.T) {
	orig := small()
	for k := range orig.Matrices {
		var b bytes.Buffer
		if err := WriteCSV(&b, &orig.Matrices[k]); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV(&b, "rt.csv", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Matrices[0].Bytes, orig.Matrices[k].Bytes) {
			t.Errorf("CSV round trip of matrix %d: %v, want %v", k, back.Matrices[0].Bytes, orig.Matrices[k].Bytes)
		}
	}
	var b bytes.Buffer
	if err := WriteNPY(&b, [][][]int64{orig.Matrices[0].Bytes, orig.Matrices[1].Bytes}); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b.Bytes(), "rt.npy", LoadOptions{Layout: LayoutPairs})
	if err != nil {
		t.Fatal(err)
	}
	for k, m := range back.Matrices {
		o := orig.Matrices[k]
		if m.Layer != o.Layer || m.Phase != o.Phase || !reflect.DeepEqual(m.Bytes, o.Bytes) {
			t.Errorf(".npy round trip of matrix %d: %+v, want %+v", k, m, o)
		}
	}
	// And back to canonical JSON: the same matrices survive a write and a read.
	back.Meta = orig.Meta
	for k := range back.Matrices {
		back.Matrices[k].Iteration, back.Matrices[k].Dataset = orig.Matrices[k].Iteration, orig.Matrices[k].Dataset
	}
	j1, _ := back.Marshal()
	j2, _ := orig.Marshal()
	if !bytes.Equal(j1, j2) {
		t.Errorf("canonical JSON after the .npy round trip differs:\n%s\nwant\n%s", j1, j2)
	}
}

func TestLargeValuesRoundTrip(t *testing.T) {
	// The largest loads the limits allow (a total of exactly 2^53); the entries are odd, so a
	// trip through float32 or a parser that rounds would change them.
	big := [][]int64{{0, 1<<52 + 12345}, {1<<52 - 12345, 0}}
	tr, err := FromMatrices([][][]int64{big}, LayoutLayers, "big")
	if err != nil {
		t.Fatal(err)
	}
	j, _ := tr.Marshal()
	back, err := Read(bytes.NewReader(j), "big.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	var c, n bytes.Buffer
	WriteCSV(&c, &back.Matrices[0])
	WriteNPY(&n, [][][]int64{back.Matrices[0].Bytes})
	fromCSV, err1 := ReadCSV(&c, "big.csv", 0)
	fromNPY, err2 := ReadNPY(&n, "big.npy", 0)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !reflect.DeepEqual(fromCSV.Matrices[0].Bytes, big) || !reflect.DeepEqual(fromNPY[0], big) {
		t.Errorf("large values changed: csv %v npy %v, want %v", fromCSV.Matrices[0].Bytes, fromNPY[0], big)
	}
}
