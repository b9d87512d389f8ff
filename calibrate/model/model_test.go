package model

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestLoadAndPair(t *testing.T) {
	c, err := Load("testdata/two-gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs() != 2 {
		t.Errorf("GPUs() = %d, want 2", c.GPUs())
	}
	p, ok := c.Pair(0, 1)
	// T(m) = α + β·m: 10 µs + 1 MiB · 40 ps/B = 10 µs + 41.94304 µs.
	if !ok || math.Abs(p.Seconds(1<<20)-(1e-5+4e-11*(1<<20))) > 1e-18 {
		t.Errorf("pair (0,1): %+v, %v; T(1 MiB) = %g", p, ok, p.Seconds(1<<20))
	}
	if _, ok := c.Pair(0, 0); ok {
		t.Error("pair (0,0) should not exist")
	}
	// Write then Read gives the same calibration back.
	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		t.Fatal(err)
	}
	c2, err := Read(&buf, "round trip")
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := c2.Pair(1, 0); q.Alpha != 2e-5 || q.Beta != 5e-11 || c2.Inventory.GPUs[1].PCIBusID != "0000:02:00.0" {
		t.Errorf("round trip lost data: %+v", c2)
	}
}

func TestReadErrorsNameTheField(t *testing.T) {
	base := `{"version": 1, "inventory": {"gpus": [{"index": 0, "name": "a"}, {"index": 1, "name": "b"}]}, "pairs": [%s]}`
	pair := func(s string) string { return strings.Replace(base, "%s", s, 1) }
	tests := []struct {
		name, json, want string
	}{
		{"version", `{"version": 2, "inventory": {"gpus": []}, "pairs": []}`, "field version: 2"},
		{"unknown field", `{"version": 1, "inventory": {"gpus": []}, "pairs": [], "extra": 1}`, `unknown field "extra"`},
		{"gpu order", `{"version": 1, "inventory": {"gpus": [{"index": 1, "name": "a"}]}, "pairs": []}`, "inventory.gpus[0].index"},
		{"pattern", pair(`{"src": 1, "dst": 1, "pattern": "all-to-all", "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1}`), `pairs[0].pattern: "all-to-all"`},
		{"outside", pair(`{"src": 0, "dst": 2, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1}`), "outside the inventory"},
		{"negative alpha", pair(`{"src": 0, "dst": 1, "alpha_seconds": -1, "beta_seconds_per_byte": 1e-11, "r2": 1}`), "pairs[0].alpha_seconds: -1"},
		{"zero beta", pair(`{"src": 0, "dst": 1, "alpha_seconds": 0, "beta_seconds_per_byte": 0, "r2": 1}`), "pairs[0].beta_seconds_per_byte: 0"},
		{"r2", pair(`{"src": 0, "dst": 1, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1.5}`), "pairs[0].r2: 1.5"},
		{"duplicate", pair(`{"src": 0, "dst": 1, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1},
			{"src": 0, "dst": 1, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1}`), "pairs[1]: GPU pair (0, 1) appears twice"},
		{"bad median", pair(`{"src": 0, "dst": 1, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1, "medians": [{"bytes": -1, "seconds": 1}]}`), "pairs[0].medians[0]"},
		{"trailing", `{"version": 1, "inventory": {"gpus": []}, "pairs": []} {}`, "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.json), "cal.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cal.json: ") {
				t.Fatalf("error %v, want one starting with the file name and containing %q", err, tc.want)
			}
		})
	}
}

func ExamplePairFit_Seconds() {
	p := PairFit{Src: 0, Dst: 1, Alpha: 10e-6, Beta: 1.0 / 25e9} // 10 µs + 25 GB/s
	fmt.Printf("%.1f µs\n", p.Seconds(1_000_000)*1e6)
	// Output: 50.0 µs
}
