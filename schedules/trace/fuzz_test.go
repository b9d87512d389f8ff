package trace

import (
	"bytes"
	"reflect"
	"testing"
)

// The fuzzers check that no input panics or hangs a reader, and that whatever a reader accepts
// is a valid trace that survives a write and a read unchanged. Seeds are in testdata/fuzz.

func FuzzReadTrace(f *testing.F) {
	f.Add([]byte(validJSON))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(bytes.NewReader(data), "f.json", 64)
		if err != nil {
			return
		}
		if err := tr.Validate(64); err != nil {
			t.Fatalf("Read accepted an invalid trace: %v", err)
		}
		b, err := tr.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Read(bytes.NewReader(b), "again.json", 64)
		if err != nil {
			t.Fatalf("canonical output does not read back: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(back, tr) {
			t.Fatalf("round trip changed the trace")
		}
	})
}

func FuzzReadNPY(f *testing.F) {
	var b bytes.Buffer
	WriteNPY(&b, [][][]int64{{{0, 1}, {2, 0}}})
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ReadNPY(bytes.NewReader(data), "f.npy", 64)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteNPY(&out, ms); err != nil {
			t.Fatalf("accepted matrices do not write: %v", err)
		}
		back, err := ReadNPY(&out, "again.npy", 64)
		if err != nil || !reflect.DeepEqual(back, ms) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzReadRoutingJSONL(f *testing.F) {
	f.Add([]byte(`{"layer": 0, "token_idx": 1, "problem_id": "a", "experts": [0, 3]}` + "\n" + `{"layer": 1, "source": 1, "experts": [2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, one := range []bool{false, true} {
			o := routingOpts(one)
			tr, err := ImportRouting(bytes.NewReader(data), "f.jsonl", o)
			if err != nil {
				continue
			}
			// Every routing becomes exactly unit bytes (or at most that, with one copy per GPU).
			rs, _ := ReadRouting(bytes.NewReader(data), "f.jsonl", o.Experts, o.GPUs)
			var routings, total int64
			for _, r := range rs {
				routings += int64(len(r.Experts))
			}
			for _, m := range tr.Matrices {
				if m.Phase != Dispatch {
					continue
				}
				for _, row := range m.Bytes {
					for _, v := range row {
						total += v
					}
				}
			}
			unit := int64(o.Hidden * o.DtypeBytes)
			if (!one && total != routings*unit) || (one && total > routings*unit) {
				t.Fatalf("one copy per GPU %v: %d bytes for %d routings of %d", one, total, routings, unit)
			}
		}
	})
}

// FuzzReadCSV goes through Parse, the loader the CLI uses, so format detection is fuzzed too.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b\n0,1\n2,0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse(data, "f.csv", LoadOptions{MaxPorts: 64})
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteCSV(&b, &tr.Matrices[0]); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV(&b, "again.csv", 64)
		if err != nil || !reflect.DeepEqual(back.Matrices[0].Bytes, tr.Matrices[0].Bytes) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
