package benchfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	f := &File{Version: Version, Backend: "fake", TRSeconds: 0.002, TWSeconds: 0.005, Switches: 20,
		RoundTrip: Stats{Samples: 10, MedianSeconds: 0.002, P99Seconds: 0.0021}, Batch: 4,
		BatchBusy: []BatchSample{{Changes: 4, Samples: 3, MedianSeconds: 0.002, MinSeconds: 0.0019, Requests: 1}, {Changes: 5, Samples: 3, MedianSeconds: 0.004, MinSeconds: 0.0039, Requests: 2}}}
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bench.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, f) {
		t.Errorf("read back %+v, want %+v", g, f)
	}
}

func TestRejects(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"version":3,"t_r_seconds":0,"t_w_seconds":0}`, "version: 3"},
		{`{"version":1,"t_r_seconds":0,"t_w_seconds":0,"batch":16}`, "batch: 16 in a version 1 file"},
		{`{"version":2,"t_r_seconds":0,"t_w_seconds":0,"batch":-1}`, "batch: -1"},
		{`{"version":1,"t_r_seconds":-1,"t_w_seconds":0}`, "t_r_seconds: -1"},
		{`{"version":1,"t_r_seconds":0,"t_w_seconds":1e308}`, "t_w_seconds"},
		{`{"version":1,"t_r_seconds":0,"t_w_seconds":0,"extra":1}`, "unknown field"},
		{`{"version":1,"t_r_seconds":0,"t_w_seconds":0}]]`, "after the JSON"},
		{`{"version":1,"t_r_seconds":"2ms","t_w_seconds":0}`, "t_r_seconds"},
	} {
		_, err := Decode(strings.NewReader(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
}

// TestVersion1 reads a bench file written before B was measured: B = 0, one request per
// command, as the emulator charged it then.
func TestVersion1(t *testing.T) {
	f, err := Decode(strings.NewReader(`{"version":1,"backend":"fake","t_r_seconds":0.002,"t_w_seconds":0.005,"round_trip":{"samples":3,"median_seconds":0.002,"p99_seconds":0.002,"min_seconds":0.002,"max_seconds":0.002},"settle":{"samples":0,"median_seconds":0,"p99_seconds":0,"min_seconds":0,"max_seconds":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := f.Model(); m.Batch != 0 || m.TR != 0.002 || m.TW != 0.005 || m.Cost(40) != 0.007 {
		t.Errorf("version 1 file: model %+v, cost of 40 changes %v; want B = 0 and T_r + T_w = 0.007", m, m.Cost(40))
	}
}

func ExampleDecode() {
	f, err := Decode(strings.NewReader(`{"version":2,"backend":"serial","t_r_seconds":0.002,"t_w_seconds":0.005,"batch":16}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// A command of k changes costs ⌈k/B⌉·T_r + T_w.
	m := f.Model()
	fmt.Printf("%s: T_r %.0f ms, T_w %.0f ms, B %d, 20 changes %.0f ms\n", f.Backend, m.TR*1e3, m.TW*1e3, m.Batch, m.Cost(20)*1e3)
	// Output: serial: T_r 2 ms, T_w 5 ms, B 16, 20 changes 9 ms
}
