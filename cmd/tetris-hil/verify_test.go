package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// A schedule broken three ways (a lost byte, a wire that does not exist, and, as a barrier round,
// a lane used twice) gets every violation listed and exit status 1.
func TestVerifyBrokenScheduleGolden(t *testing.T) {
	out, code, err := cli(t, "verify", "testdata/verify/broken.schedule.json", "--demand", "testdata/emulate/hand4.csv")
	if code != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s", code, err, out)
	}
	if !strings.Contains(err.Error(), "invalid") {
		t.Errorf("error %q does not say invalid", err)
	}
	goldenfile.Check(t, "testdata/verify/broken.golden.txt", []byte(out))
	for _, kind := range []string{"bytes:", "path:", "round-lane:"} {
		if !strings.Contains(out, kind) {
			t.Errorf("output lacks a %s violation", kind)
		}
	}
}

func TestVerifyUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "missing.json", "--demand", "testdata/emulate/hand4.csv"}, "missing.json"},
		{[]string{"verify", "testdata/emulate/hand4.schedule.json", "--demand", "nope.csv"}, "nope.csv"},
		{[]string{"verify", "testdata/emulate/hand4.schedule.json"}, "holds 30 matrices"},
		{[]string{"verify"}, "takes 1 argument"},
	} {
		if _, code, err := cli(t, tc.args...); code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", tc.args, code, err, tc.want)
		}
	}
}

// Every registered scheduler, on both fabrics, on every matrix of generated traces (one with a GPU
// count that is not a power of two, so the Beneš fabric is padded) and of the built-in trace's
// first layer: `schedule` then `verify` through the CLI, as a user runs them.
func TestEveryAlgorithmVerifiesOnGeneratedTraces(t *testing.T) {
	dir := t.TempDir()
	traces := map[string][]string{
		"mixtral-8x22b-8": {"--model", "mixtral-8x22b", "--gpus", "8", "--layers", "2", "--seed", "7"},
		"deepseek-12":     {"--model", "deepseek-moe-16b", "--gpus", "12", "--layers", "2", "--tokens-per-gpu", "512"},
		"custom-5":        {"--model", "custom", "--gpus", "5", "--experts", "10", "--top-k", "3", "--layers", "1", "--skew", "1.5"},
	}
	var files []string
	for name, args := range traces {
		f := filepath.Join(dir, name+".json")
		if out, code, err := cli(t, append([]string{"trace", "gen", "-o", f}, args...)...); code != 0 {
			t.Fatalf("trace gen %s: exit %d: %v\n%s", name, code, err, out)
		}
		files = append(files, f)
	}
	builtin := filepath.Join(dir, "builtin.json")
	if out, code, err := cli(t, "trace", "export", "--layer", "0", "-o", builtin); code != 0 {
		t.Fatalf("trace export: exit %d: %v\n%s", code, err, out)
	}
	files = append(files, builtin)
	checked := 0
	for _, f := range files {
		count, err := matricesIn(f)
		if err != nil {
			t.Fatal(err)
		}
		for m := 0; m < count; m++ {
			for _, algo := range schedules.Names() {
				for _, fabric := range []string{"benes", "crossbar"} {
					s := filepath.Join(dir, fmt.Sprintf("%s-%d-%s-%s.json", filepath.Base(f), m, algo, fabric))
					mi := fmt.Sprint(m)
					if out, code, err := cli(t, "schedule", "--algo", algo, "--fabric", fabric, "--demand", f, "--matrix", mi,
						"--bandwidth", "800Gbps", "--reconfig", "10us", "-o", s); code != 0 {
						t.Fatalf("schedule %s %s matrix %d: exit %d: %v\n%s", algo, filepath.Base(f), m, code, err, out)
					}
					if out, code, err := cli(t, "verify", s, "--demand", f, "--matrix", mi); code != 0 {
						t.Fatalf("verify %s %s matrix %d on %s: exit %d: %v\n%s", algo, filepath.Base(f), m, fabric, code, err, out)
					}
					checked++
				}
			}
		}
	}
	// 2 layers × 2 phases; DeepSeek layer 0 is dense (no All-to-All); 1 layer; layer 0 of 5 datasets.
	if want := 2 * len(schedules.Names()) * (4 + 2 + 2 + 10); checked != want {
		t.Errorf("checked %d schedules, want %d", checked, want)
	}
}

func matricesIn(path string) (int, error) {
	var src demandSource
	src.register(pflag.NewFlagSet("matrices", pflag.ContinueOnError))
	src.path = path
	ds, err := src.load(context.Background())
	return len(ds), err
}

// verify --timeline reads the run records emulate --timeline writes, and refuses a record of an
// unknown version with exit 2 naming the file and the field.
func TestVerifyReadsRunRecords(t *testing.T) {
	dir := t.TempDir()
	sched, csv := "testdata/emulate/hand4.schedule.json", "testdata/emulate/hand4.csv"
	if out, code, err := cli(t, "emulate", "--schedule", sched, "--demand", csv, "--timeline", dir); code != 0 {
		t.Fatalf("emulate: exit %d: %v\n%s", code, err, out)
	}
	rec := filepath.Join(dir, "m0-hand.timeline.json")
	if out, code, err := cli(t, "verify", sched, "--demand", csv, "--timeline", rec); code != 0 || !strings.Contains(out, "valid") {
		t.Fatalf("verify: exit %d: %v\n%s", code, err, out)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "v9.json")
	if err := os.WriteFile(bad, bytes.Replace(b, []byte(`"version": 2`), []byte(`"version": 9`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code, err := cli(t, "verify", sched, "--demand", csv, "--timeline", bad); code != 2 || !strings.Contains(err.Error(), "field version = 9") {
		t.Errorf("version 9: exit %d, %v", code, err)
	}
}

// verify --timeline does not hide a record's parse errors behind "missing from the timeline", and
// a record of another schedule is named as such: each a one-line exit-2 error naming the field
// and the value, or the schedule the record belongs to.
func TestVerifyTimelineHostileRecords(t *testing.T) {
	dir := t.TempDir()
	sched, csv := "testdata/emulate/hand4.schedule.json", "testdata/emulate/hand4.csv"
	if out, code, err := cli(t, "emulate", "--schedule", sched, "--demand", csv, "--timeline", dir); code != 0 {
		t.Fatalf("emulate: exit %d: %v\n%s", code, err, out)
	}
	rec := filepath.Join(dir, "m0-hand.timeline.json")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "tetris.json")
	if out, code, err := cli(t, "schedule", "--algo", "tetris", "--demand", csv, "-o", other); code != 0 {
		t.Fatalf("schedule: exit %d: %v\n%s", code, err, out)
	}
	// The first switch change of the timeline is on line 203: after the record's head, its result
	// and its per-switch state changes (six switches, five lines each as MarshalIndent writes them).
	for _, c := range []struct {
		name, from, to, schedule, want string
	}{
		{"diagonal", `"to": "cross"`, `"to": "diagonal"`, sched, `: line 203, column 11: field timeline.switch_changes.to: switch state "diagonal" is not "bar" or "cross"`},
		{"unknown field", `"circuit": 1,`, `"circuit": 1, "colour": "red",`, sched, `field timeline.circuits[1].colour: unknown field`},
		{"version 99", `"version": 2`, `"version": 99`, sched, `field version = 99: not supported`},
		{"trailing", "\n}\n", "\n}\n]]]\n", sched, `data after the JSON value`},
		{"another schedule", "", "", other, "belongs to another schedule: " + rec + " is the run of " + filepath.Join(dir, "m0-hand.schedule.json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rec
			if c.from != "" {
				if !bytes.Contains(b, []byte(c.from)) {
					t.Fatalf("the record has no %q", c.from)
				}
				p = filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
				if err := os.WriteFile(p, bytes.Replace(b, []byte(c.from), []byte(c.to), 1), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, code, err := cli(t, "verify", c.schedule, "--demand", csv, "--timeline", p)
			if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || out != "" {
				t.Errorf("exit %d, %v, output %q: want exit 2, one line containing %q", code, err, out, c.want)
			}
		})
	}
}

// verify --tenants: a strict schedule from schedule --tenants passes; the same schedule with one
// circuit planted onto a path that turns a switch its allocation holds straight, or joins one
// tenant's port to another's, fails with exit 1 and violations naming the circuit, its tenant
// and the switch; a block the strict allocation cannot give is a usage error.
func TestVerifyTenantsRejectsPlantedCrossing(t *testing.T) {
	dir := t.TempDir()
	tenants := "0-3=../../examples/tenant-a.csv,4-7=../../examples/tenant-b.csv"
	good := filepath.Join(dir, "strict.json")
	if out, code, err := cli(t, "schedule", "--tenants", tenants, "--allocation", "strict", "--fabric-ports", "16", "-o", good); code != 0 {
		t.Fatalf("schedule --tenants: exit %d (%v)\n%s", code, err, out)
	}
	if out, code, err := cli(t, "verify", good, "--tenants", tenants, "--allocation", "strict"); code != 0 || !strings.Contains(out, "valid: 24 circuits") {
		t.Fatalf("verify --tenants of the strict plan: exit %d (%v)\n%s", code, err, out)
	}
	s, err := schedules.LoadSchedule(good)
	if err != nil {
		t.Fatal(err)
	}
	f, err := benes.New(s.N)
	if err != nil {
		t.Fatal(err)
	}
	plant := func(name string, edit func(c *schedules.Circuit)) string {
		m := *s
		m.Circuits = append([]schedules.Circuit(nil), s.Circuits...)
		edit(&m.Circuits[0])
		var buf bytes.Buffer
		if err := m.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Circuit 0 (tenant 0-3's) takes the other child at level 2, which its block of 4 must pass
	// straight: outside its strict allocation, inside the centre one.
	turned := plant("turned.json", func(c *schedules.Circuit) {
		_, _, choices, _, _ := c.Path.Compact()
		c.Path = f.NewPath(c.Src, c.Dst, choices^1<<2)
	})
	out, code, err := cli(t, "verify", turned, "--tenants", tenants, "--allocation", "strict")
	if code != 1 || !strings.Contains(err.Error(), "invalid") {
		t.Fatalf("planted turn under strict: exit %d (%v), want 1\n%s", code, err, out)
	}
	t.Logf("planted turn:\n%s", out)
	if !regexpMatch(`tenant: circuit 0: \d+→\d+ \(tenant 0-3\) uses switch \d+:\d+ lane \d→\d, outside its strict allocation`, out) {
		t.Errorf("planted turn: the violation does not name circuit 0, its tenant and the switch:\n%s", out)
	}
	if out, code, err := cli(t, "verify", turned, "--tenants", tenants, "--allocation", "centre"); code != 0 {
		t.Errorf("the turn is in the centre, which centre shares: exit %d (%v)\n%s", code, err, out)
	}
	// Circuit 0 goes to tenant 4-7's port 5: it joins no tenant's ports (and the bytes are off).
	crossing := plant("crossing.json", func(c *schedules.Circuit) {
		c.Dst = 5
		c.Path = f.NewPath(c.Src, c.Dst, 0)
	})
	out, code, _ = cli(t, "verify", crossing, "--tenants", tenants, "--allocation", "shared")
	if code != 1 || !strings.Contains(out, "tenant: circuit 0: 1→5 joins no tenant's ports to its own") {
		t.Errorf("planted crossing: exit %d, want 1 with a tenant violation of circuit 0\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", good, "--tenants", "0-2=../../examples/tenant-a.csv"}, "holds a 4-port matrix"},
		{[]string{"verify", good, "--tenants", "2-5=../../examples/tenant-a.csv", "--allocation", "strict"}, "strict allocation"},
		{[]string{"verify", good, "--tenants", tenants, "--allocation", "wide"}, "is not shared, centre or strict"},
		{[]string{"verify", good, "--tenants", tenants, "--demand", "../../examples/demand.csv"}, "not with --tenants"},
		{[]string{"verify", good, "--demand", "../../examples/demand.csv", "--allocation", "strict"}, "only with --tenants"},
		{[]string{"verify", good, "--tenants", "12-15=../../examples/tenant-a.csv,16-19=../../examples/tenant-b.csv"}, "not all on the 16-port fabric"},
	} {
		if _, code, err := cli(t, tc.args...); code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", tc.args, code, err, tc.want)
		}
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
