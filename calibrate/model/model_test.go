package model

import (
	"bytes"
	"fmt"
	"math"
	"os"
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

// TestReadRejectsCorruptTruncatedForeign: a file cut short, garbage, another tool's JSON (a
// gpu-bench result), a wrong type and a pair beyond the inventory are rejected with an error that
// says which field or where, never read half.
func TestReadRejectsCorruptTruncatedForeign(t *testing.T) {
	good, err := os.ReadFile("testdata/two-gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	huge := `{"version": 1, "inventory": {"gpus": []}, "pairs": [{"src": 1000000000, "dst": 0, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1}]}`
	tests := []struct {
		name, json, want string
	}{
		{"truncated", string(good[:len(good)/2]), "truncated: the JSON ends after"},
		{"corrupt", strings.Replace(string(good), `"pairs": [`, `"pairs": [}`, 1), "not JSON at byte"},
		{"foreign", `{"src": {"gpu": 0}, "dst": {"gpu": 1}, "engine": "fake", "rows": []}`, "field version: missing: not a calibration file (its top-level fields are dst, engine, rows, src)"},
		{"wrong type", strings.Replace(string(good), `"alpha_seconds": 1e-5`, `"alpha_seconds": "10us"`, 1), "field pairs.alpha_seconds: a JSON string where a float64 belongs"},
		{"beyond inventory", huge, "pairs[0]: GPU pair (1000000000, 0) is outside the inventory of 0 GPUs"},
		{"empty inventory", `{"version": 1, "inventory": {"gpus": []}, "pairs": [{"src": 0, "dst": 1, "alpha_seconds": 0, "beta_seconds_per_byte": 1e-11, "r2": 1}]}`, "outside the inventory of 0 GPUs"},
		{"piece order", strings.Replace(string(good), `"r2": 0.998}`, `"r2": 0.998, "pieces": [{"from_bytes": 0, "min_bytes": 1, "max_bytes": 2, "alpha_seconds": 1e-6, "beta_seconds_per_byte": 1e-11, "r2": 1}, {"from_bytes": 0, "min_bytes": 3, "max_bytes": 4, "alpha_seconds": 1e-6, "beta_seconds_per_byte": 1e-11, "r2": 1}]}`, 1), "pairs[1].pieces[1].from_bytes: 0 is not above"},
		{"plan sizes", strings.Replace(string(good), `"inventory"`, `"plan": {"pairs": [[0, 1]], "sizes": [4096, 4096], "warmup": 1, "reps": 3, "copy": "ce", "patterns": ["isolated"], "verify_every": 0, "engine": "fake"}, "inventory"`, 1), "field plan.sizes[1]: 4096 bytes"},
		{"plan pair", strings.Replace(string(good), `"inventory"`, `"plan": {"pairs": [[0, 5]], "sizes": [4096], "warmup": 1, "reps": 3, "copy": "ce", "patterns": ["isolated"], "verify_every": 0, "engine": "fake"}, "inventory"`, 1), "field plan.pairs[0]: GPU pair (0, 5)"},
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

// TestPiecesCoverSizes: a two-piece fit predicts each size with the piece that covers it, and a
// later piece may have a negative intercept as long as its time is positive where it starts.
func TestPiecesCoverSizes(t *testing.T) {
	p := PairFit{Src: 0, Dst: 1, Alpha: 5e-6, Beta: 1e-11, R2: 1, Pieces: []Piece{
		{FromBytes: 0, MinBytes: 4096, MaxBytes: 1 << 20, Alpha: 5e-6, Beta: 1e-11, R2: 1},
		{FromBytes: 1 << 20, MinBytes: 2 << 20, MaxBytes: 1 << 30, Alpha: -5e-6, Beta: 2e-11, R2: 1},
	}}
	for _, tt := range []struct {
		bytes int64
		want  float64
	}{{4096, 5e-6 + 4096e-11}, {1<<20 - 1, 5e-6 + float64(1<<20-1)*1e-11}, {1 << 20, -5e-6 + float64(1<<20)*2e-11}, {1 << 30, -5e-6 + float64(1<<30)*2e-11}} {
		if got := p.Seconds(tt.bytes); math.Abs(got-tt.want) > 1e-18 {
			t.Errorf("Seconds(%d) = %g, want %g", tt.bytes, got, tt.want)
		}
	}
	c := &Calibration{Version: 1, Inventory: Inventory{GPUs: []GPU{{Index: 0}, {Index: 1}}}, Pairs: []PairFit{p}}
	if err := c.Validate(); err != nil {
		t.Errorf("valid two-piece fit rejected: %v", err)
	}
	c.Pairs[0].Pieces[1].Alpha = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "pairs[0].pieces[1]") {
		t.Errorf("piece with a negative time at its start: %v", err)
	}
}

func TestPatternsAndGPUMap(t *testing.T) {
	c, err := Load("testdata/two-gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	perm := c.Pairs[0]
	perm.Pattern, perm.Alpha = Permutation, 3e-5
	c.Pairs = append(c.Pairs, perm)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if p, _ := c.Pair(0, 1); p.Alpha != 3e-5 {
		t.Errorf("Pair(0, 1) = %+v, want the permutation fit", p)
	}
	if p, _ := c.Pair(1, 0); p.Alpha != 2e-5 {
		t.Errorf("Pair(1, 0) = %+v, want the isolated fit (no permutation measured)", p)
	}
	if got := c.Patterns(); len(got) != 2 || got[0] != Isolated {
		t.Errorf("Patterns() = %v", got)
	}
	c.Pairs = append(c.Pairs, perm)
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "appears twice under pattern permutation") {
		t.Errorf("duplicate permutation pair: %v", err)
	}
	c.Pairs = c.Pairs[:3]
	m, err := c.GPUMap("1, 00000000:01:00.0,0000:02:00.0")
	if err != nil || len(m) != 3 || m[0] != 1 || m[1] != 0 || m[2] != 1 {
		t.Errorf("GPUMap = %v, %v", m, err)
	}
	for _, bad := range []string{"2", "0000:03:00.0", "GPU-nope"} {
		_, err := c.GPUMap("0," + bad)
		if err == nil || !strings.Contains(err.Error(), "port 1") || !strings.Contains(err.Error(), "2 GPUs on lab-1: 0 0000:01:00.0, 1 0000:02:00.0") {
			t.Errorf("GPUMap with %q: %v; want an error naming it and the calibration's GPUs", bad, err)
		}
	}
}

func TestPlanDiff(t *testing.T) {
	a := &Plan{Pairs: [][2]int{{0, 1}}, Sizes: []int64{1, 2, 3}, Reps: 5, Copy: "ce", Patterns: []string{Isolated}, Engine: "fake"}
	b := *a
	if d := a.Diff(&b); d != "" || !a.Equal(&b) {
		t.Errorf("equal plans differ: %q", d)
	}
	b.Copy = "sm"
	if d := a.Diff(&b); d != `plan.copy: "ce" here, "sm" in the file` || a.Equal(&b) {
		t.Errorf("Diff = %q", d)
	}
}

// FuzzRead: whatever the bytes, Read returns an error or a calibration that validates and
// survives a write and read back unchanged; it never panics or allocates per GPU pair index.
func FuzzRead(f *testing.F) {
	good, _ := os.ReadFile("testdata/two-gpus.json")
	f.Add(good)
	f.Add([]byte(`{"version": 1, "inventory": {"gpus": []}, "pairs": []}`))
	f.Add([]byte(`{"version": 1, "inventory": {"gpus": [{"index": 0, "name": "a"}]}, "pairs": [{"src": 0, "dst": 0, "alpha_seconds": 1e-6, "beta_seconds_per_byte": 1e-11, "r2": 1, "pieces": [{"from_bytes": 0, "min_bytes": 1, "max_bytes": 2, "alpha_seconds": 1e-6, "beta_seconds_per_byte": 1e-11, "r2": 1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Read(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		b, err := c.Marshal()
		if err != nil {
			t.Fatalf("accepted calibration does not write: %v", err)
		}
		c2, err := Read(bytes.NewReader(b), "again.json")
		if err != nil {
			t.Fatalf("written calibration does not read back: %v\n%s", err, b)
		}
		b2, _ := c2.Marshal()
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the file:\n%s\n%s", b, b2)
		}
	})
}
