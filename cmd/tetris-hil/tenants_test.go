package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTenantCSVs(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		"a.csv": "0,4000,1000,0\n3000,0,0,2000\n0,5000,0,2000\n0,0,1000,0\n",
		"b.csv": "0,8000,0,0\n0,0,9000,0\n7000,0,0,100\n0,6000,0,0\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEmulateTenantsJSON: emulate --tenants writes, per run, the tenants with their ports and
// completions; the fabric's completion is the later of them; strict A is the same with B
// scaled; a misaligned block is refused under strict (exit 2, the reason named) and runs shared.
func TestEmulateTenantsJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	writeTenantCSVs(t, ".")
	type run struct {
		Algorithm         string  `json:"algorithm"`
		CompletionSeconds float64 `json:"completion_seconds"`
		Tenants           []struct {
			Ports             string  `json:"ports"`
			CompletionSeconds float64 `json:"completion_seconds"`
			PathsPerPair      int     `json:"paths_per_pair"`
		} `json:"tenants"`
	}
	read := func(args ...string) []run {
		out, code, err := cli(t, append([]string{"emulate", "--json", "t.json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d (%v)\n%s", args, code, err, out)
		}
		var rep struct{ Runs []run }
		b, _ := os.ReadFile("t.json")
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Runs
	}
	strict := read("--tenants", "0-3=a.csv,4-7=b.csv", "--allocation", "strict", "--algo", "tetris,bvn", "--fabric-ports", "16")
	if len(strict) != 2 {
		t.Fatalf("%d runs, want 2", len(strict))
	}
	for _, r := range strict {
		if len(r.Tenants) != 2 || r.Tenants[0].Ports != "0-3" || r.Tenants[1].Ports != "4-7" || r.Tenants[0].PathsPerPair != 2 ||
			r.CompletionSeconds != max(r.Tenants[0].CompletionSeconds, r.Tenants[1].CompletionSeconds) {
			t.Fatalf("run %+v", r)
		}
	}
	// B = A's matrix twice over: A's strict completion is unchanged.
	b2 := "0,8000,2000,0\n6000,0,0,4000\n0,10000,0,4000\n0,0,2000,0\n"
	if err := os.WriteFile("b.csv", []byte(b2), 0o644); err != nil {
		t.Fatal(err)
	}
	again := read("--tenants", "0-3=a.csv,4-7=b.csv", "--allocation", "strict", "--algo", "tetris,bvn", "--fabric-ports", "16")
	for i := range again {
		if again[i].Tenants[0].CompletionSeconds != strict[i].Tenants[0].CompletionSeconds {
			t.Errorf("%s: A's strict completion %g with B changed, %g before", again[i].Algorithm, again[i].Tenants[0].CompletionSeconds, strict[i].Tenants[0].CompletionSeconds)
		}
	}
	if err := os.WriteFile("c.csv", []byte("0,1,1\n1,0,1\n1,1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err := cli(t, "emulate", "--tenants", "0-2=c.csv,4-7=a.csv", "--allocation", "strict")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "ports 0-2: 3 ports is not a power of two") {
		t.Fatalf("misaligned strict: exit %d, %v", code, err)
	}
	if shared := read("--tenants", "0-2=c.csv,4-7=a.csv", "--algo", "tetris"); len(shared) != 1 || shared[0].Tenants[0].Ports != "0-2" {
		t.Fatalf("misaligned shared: %+v", shared)
	}
	for _, bad := range [][]string{
		{"--tenants", "0-3=a.csv,2-5=b.csv"},
		{"--tenants", "0-3"},
		{"--tenants", "0-2=a.csv"},
		{"--tenants", "0-3=a.csv", "--allocation", "private"},
		{"--tenants", "0-3=a.csv", "--demand", "a.csv"},
	} {
		if _, code, err := cli(t, append([]string{"emulate"}, bad...)...); code != 2 || err == nil {
			t.Errorf("%v: exit %d, %v; want a usage error", bad, code, err)
		}
	}
}

// TestTenantsCommand: the interference experiment's strict rows have A flat over B's variants
// and its help examples run.
func TestTenantsCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	out, code, err := cli(t, "tenants", "--algo", "tetris,bvn", "--json", "i.json")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	var rep struct {
		Rows []struct {
			Allocation string
			Algorithm  string
			A          struct{ Min, Max float64 } `json:"a"`
		}
	}
	b, _ := os.ReadFile("i.json")
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 6 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Allocation == "strict" && r.A.Min != r.A.Max {
			t.Errorf("strict %s: A spreads %g..%g", r.Algorithm, r.A.Min, r.A.Max)
		}
	}
	if !strings.Contains(out, "A B-IDLE / SHARED") {
		t.Errorf("table:\n%s", out)
	}
}
