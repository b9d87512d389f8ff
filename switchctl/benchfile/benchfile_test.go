package benchfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	f := &File{Version: 1, Backend: "fake", TRSeconds: 0.002, TWSeconds: 0.005, Switches: 20,
		RoundTrip: Stats{Samples: 10, MedianSeconds: 0.002, P99Seconds: 0.0021}}
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
	if *g != *f {
		t.Errorf("read back %+v, want %+v", g, f)
	}
}

func TestRejects(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"version":2,"t_r_seconds":0,"t_w_seconds":0}`, "version: 2"},
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

func ExampleDecode() {
	f, err := Decode(strings.NewReader(`{"version":1,"backend":"serial","t_r_seconds":0.002,"t_w_seconds":0.005}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// k simultaneous changes cost about k·T_r + T_w.
	k := 4.0
	fmt.Printf("%s: T_r %.0f ms, T_w %.0f ms, 4 changes %.0f ms\n", f.Backend, f.TRSeconds*1e3, f.TWSeconds*1e3, (k*f.TRSeconds+f.TWSeconds)*1e3)
	// Output: serial: T_r 2 ms, T_w 5 ms, 4 changes 13 ms
}
