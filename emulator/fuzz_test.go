package emulator_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
)

// FuzzReadRunRecord: whatever the bytes, ReadRunRecord returns an error or a record that writes
// and reads back unchanged; it never panics.
func FuzzReadRunRecord(f *testing.F) {
	rec := exampleRecord(f)
	good, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"version": 1, "algorithm": "a", "matrix": {"index": -1, "layer": -1}, "result": null, "timeline": {"circuits": [{"circuit": 0, "end": 1}], "switch_changes": [{"stage": 0, "switch": 0, "from": "bar", "to": "cross"}]}}`))
	f.Add([]byte(`{"version": 2, "timeline": {"switch_changes": [{"to": "diagonal"}]}}]]]`))
	f.Add([]byte(`{"version": 99, "schedule_sha256": "x", "timeline": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := emulator.ReadRunRecord(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatalf("accepted record does not marshal: %v", err)
		}
		again, err := emulator.ReadRunRecord(bytes.NewReader(b), "again.json")
		if err != nil {
			t.Fatalf("written record does not read back: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(rec, again) {
			t.Fatalf("round trip changed the record:\n%+v\n%+v", rec, again)
		}
	})
}

// FuzzReadMeasuredTable: JSON or CSV, ReadMeasuredTable returns an error or a table whose model
// answers every pair it holds, at every size, with a finite non-negative time or an error; it
// never panics.
func FuzzReadMeasuredTable(f *testing.F) {
	good, _ := os.ReadFile("testdata/measured.csv")
	f.Add(good, true)
	f.Add([]byte(`{"version": 1, "measurements": [{"src": 0, "dst": 1, "bytes": 1000, "seconds": 1e-5}, {"src": 0, "dst": 1, "bytes": 3000, "seconds": 2e-5}]}`), false)
	f.Add([]byte("src,dst,bytes,seconds\n0,1,0,0\n0,1,9223372036854775807,1e308\n"), true)
	f.Add([]byte(`{"version": 1, "measurements": [{"src": 0, "dst": 0, "bytes": 0, "seconds": 0}]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, isCSV bool) {
		name := "fuzz.json"
		if isCSV {
			name = "fuzz.csv"
		}
		tab, err := emulator.ReadMeasuredTable(bytes.NewReader(data), name)
		if err != nil {
			return
		}
		m := emulator.MeasuredModel(tab)
		for i, x := range tab.Measurements {
			if i > 16 {
				break
			}
			for _, n := range []int64{0, 1, x.Bytes, x.Bytes / 2, min(x.Bytes, math.MaxInt64-1) + 1, math.MaxInt64, -1} {
				s, err := m.Seconds(x.Src, x.Dst, n)
				if err == nil && (math.IsNaN(s) || s < 0) {
					t.Fatalf("pair (%d, %d), %d bytes: %g s", x.Src, x.Dst, n, s)
				}
			}
		}
	})
}

// FuzzAlphaBetaModel: a calibration file that reads is a transfer model, or a clear error; the
// model answers any port pair and size without panicking or allocating per pair index.
func FuzzAlphaBetaModel(f *testing.F) {
	good, _ := os.ReadFile("../calibrate/model/testdata/two-gpus.json")
	f.Add(good)
	f.Add([]byte(`{"version": 1, "inventory": {"gpus": []}, "pairs": [{"src": 100000000, "dst": 0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := model.Read(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		m, err := emulator.AlphaBetaModel(c, nil)
		if err != nil {
			return
		}
		for _, p := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {-1, 0}, {7, 3}, {1 << 30, 0}} {
			for _, n := range []int64{0, 1, 4096, math.MaxInt64} {
				if s, err := m.Seconds(p[0], p[1], n); err == nil && math.IsNaN(s) {
					t.Fatalf("pair %v, %d bytes: NaN", p, n)
				}
			}
		}
	})
}
