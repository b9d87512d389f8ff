package trace

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// Export round-trips through the readers: CSV for one matrix, .npy and JSON for a selection.
func TestExport(t *testing.T) {
	tr, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	pick := []int{3, 0, 7}
	var npy, js, csv bytes.Buffer
	if err := tr.Export(&npy, "npy", pick); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadNPY(&npy, "x.npy", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range pick {
		if !reflect.DeepEqual(ms[i], tr.Matrices[k].Bytes) {
			t.Errorf("npy matrix %d is not trace matrix %d", i, k)
		}
	}
	if err := tr.Export(&js, "json", pick); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&js, "x.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Matrices) != 3 || back.Matrices[1].Label() != tr.Matrices[0].Label() || back.Meta.Model != tr.Meta.Model {
		t.Errorf("json export: %d matrices, second %q, model %q", len(back.Matrices), back.Matrices[1].Label(), back.Meta.Model)
	}
	if err := tr.Export(&csv, "csv", pick[:1]); err != nil {
		t.Fatal(err)
	}
	one, err := ReadCSV(&csv, "x.csv", 0)
	if err != nil || !reflect.DeepEqual(one.Matrices[0].Bytes, tr.Matrices[3].Bytes) {
		t.Errorf("csv export: %v", err)
	}
	for _, tc := range []struct {
		format string
		pick   []int
		want   error
	}{{"csv", pick, ErrOneMatrix}, {"xlsx", pick, ErrExportFormat}} {
		if err := tr.Export(&bytes.Buffer{}, tc.format, tc.pick); !errors.Is(err, tc.want) {
			t.Errorf("%s of %d matrices: error %v, want %v", tc.format, len(tc.pick), err, tc.want)
		}
	}
	if err := tr.Export(&bytes.Buffer{}, "npy", []int{99}); err == nil {
		t.Error("matrix 99 exported")
	}
}
