package shared

import (
	"path/filepath"
	"strings"
	"testing"
)

// A worker maps only a file made for its program: other sizes, or no header, are refused with
// the path and both sizes named.
func TestOpenChecksHeader(t *testing.T) {
	dir := t.TempDir()
	d := Dims{Endpoints: 4, Circuits: 10, Signals: 2, Workers: 2}
	m, err := Create(filepath.Join(dir, "a"), d)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := Create(m.Path, d); err == nil {
		t.Error("Create over an existing file succeeded")
	}
	for _, tc := range []struct {
		name string
		want Dims
		msg  string
	}{
		{"size", Dims{Endpoints: 4, Circuits: 11, Signals: 2, Workers: 2}, "bytes"},
		{"same size, other counts", Dims{Endpoints: 4, Circuits: 10, Signals: 2, Workers: 1}, "sizes"},
	} {
		if tc.name == "same size, other counts" {
			tc.want = sameSize(t, d)
		}
		_, err := Open(m.Path, tc.want)
		if err == nil || !strings.Contains(err.Error(), m.Path) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: Open: %v", tc.name, err)
		}
	}
	o, err := Open(m.Path, d)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// What one mapping writes, the other reads.
	m.EndCircuit(9, Record{Target: 1, Start: 2, End: 3})
	m.IssueSignal(1, 7)
	m.SetEndpoint(3, 5, Copying)
	m.SetClock(1, 16, -42, 9)
	if r, ok := o.Circuit(9); !ok || r != (Record{1, 2, 3}) {
		t.Errorf("circuit 9 through the other mapping: %+v %v", r, ok)
	}
	if e, ok := o.SignalEnd(1); !ok || e != 7 {
		t.Errorf("signal 1: %d %v", e, ok)
	}
	if _, ok := o.CircuitEnd(8); ok {
		t.Error("circuit 8 reads as ended")
	}
	if n, off, rtt := o.Clock(1); n != 16 || off != -42 || rtt != 9 {
		t.Errorf("worker 1's clock: %d, %d", off, rtt)
	}
	if pc, s := o.Endpoint(3); pc != 5 || s != Copying {
		t.Errorf("endpoint 3: step %d state %d", pc, s)
	}
}

// The records of one file never overlap and every 64-bit word is 8-byte aligned (atomics on a
// misaligned word are not atomic, and a GPU's 32-bit waits need 4-byte alignment).
func TestLayoutDisjointAligned(t *testing.T) {
	for _, d := range []Dims{{1, 0, 0, 1}, {8, 56, 7, 8}, {3, 5, 1, 2}} {
		e, w, c, s, size := Layout(d)
		ends := []int{e, w, c, s, size}
		lens := []int{d.Endpoints * endpointBytes, d.Workers * workerBytes, d.Circuits * circuitBytes, d.Signals * signalBytes}
		for i, l := range lens {
			if ends[i]+l > ends[i+1] || ends[i]%8 != 0 {
				t.Errorf("%+v: record array %d at %d, %d bytes, next at %d", d, i, ends[i], l, ends[i+1])
			}
		}
		if e < headerBytes || offDeadline+8 > headerBytes {
			t.Errorf("%+v: header overlaps the records", d)
		}
	}
}

// sameSize finds other counts whose file has d's size (the alignment of the circuit records
// leaves room for some).
func sameSize(t *testing.T, d Dims) Dims {
	_, _, _, _, size := Layout(d)
	for e := 1; e < 64; e++ {
		for w := 1; w < 8; w++ {
			o := Dims{Endpoints: e, Circuits: d.Circuits, Signals: d.Signals, Workers: w}
			if _, _, _, _, s := Layout(o); s == size && o != d {
				return o
			}
		}
	}
	t.Fatalf("no other counts give %+v's size", d)
	return d
}
