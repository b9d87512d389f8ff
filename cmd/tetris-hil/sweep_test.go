package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/sweep"
)

// sweepTrace is one synthetic Mixtral-8x7B layer on 8 GPUs (trace gen --layers 1 --seed 1
// --tokens-per-gpu 512): its dispatch and combine matrices.
const sweepTrace = "testdata/sweep/one-layer.json"

// smallSweep is the two matrices of sweepTrace on a 2×2 grid with two partial-reconfiguration
// baselines, small enough for a unit test.
func smallSweep(dir string, jobs int) []string {
	return []string{"sweep", "--demand", sweepTrace, "--algo", "sunflow,bff", "--reference", "sunflow",
		"--bandwidth", "800Gbps, 100Gbps", "--reconfig", "10ns,10us", "--out", dir, "--jobs", strconv.Itoa(jobs)}
}

func TestSweepWritesGridAndPlots(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code, err := runCLI(t, append(smallSweep(dir, 2), "--progress", "on")...)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	f, err := os.Open(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Header, then 2 bandwidths × 2 delays × 2 algorithms in grid order.
	if len(recs) != 1+8 {
		t.Fatalf("sweep.csv has %d records, want 9", len(recs))
	}
	if got := strings.Join(recs[0], ","); !strings.Contains(got, "ratio_vs_sunflow") {
		t.Errorf("header %q lacks the reference ratio column", got)
	}
	wantOrder := [][3]string{{"800Gbps", "10ns", "sunflow"}, {"800Gbps", "10ns", "bff"}, {"800Gbps", "10µs", "sunflow"}}
	for i, w := range wantOrder {
		if r := recs[1+i]; r[0] != w[0] || r[2] != w[1] || r[4] != w[2] || r[5] != "2" {
			t.Errorf("row %d = %v, want %v over 2 matrices", i+1, r, w)
		}
	}
	for _, r := range recs[1:] {
		sum, _ := strconv.ParseFloat(r[6], 64)
		lb, _ := strconv.ParseFloat(r[7], 64)
		if !(sum >= lb && lb > 0) {
			t.Errorf("row %v: completion sum %g below the lower-bound sum %g", r, sum, lb)
		}
		if r[4] == "sunflow" && r[8] != "1" {
			t.Errorf("row %v: the reference's ratio to itself is %s", r, r[8])
		}
	}
	for _, name := range []string{"speedup-bff.svg", "completion-vs-lower-bound.svg"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s: %v, not an SVG", name, err)
		}
	}
	for _, name := range []string{"speedup-bff.png", "completion-vs-lower-bound.png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			_, err = png.Decode(bytes.NewReader(b))
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	var manifest sweep.Manifest
	if b, err := os.ReadFile(filepath.Join(dir, "sweep.json")); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(b, &manifest); err != nil {
		t.Error(err)
	} else if !strings.HasPrefix(manifest.Tool, "tetris-hil ") || manifest.Matrices != 2 || len(manifest.Inputs) != 1 ||
		manifest.Inputs[0].Role != "demand" || len(manifest.Inputs[0].SHA256) != 64 || manifest.Reference != "sunflow" ||
		len(manifest.Bandwidths) != 2 || len(manifest.Reconfigs) != 2 {
		t.Errorf("sweep.json = %+v: want the tool, the demand's SHA-256, 2 matrices, the reference and the 2×2 grid", manifest)
	}
	if _, err := os.Stat(filepath.Join(dir, "speedup-sunflow.svg")); err == nil {
		t.Error("a heatmap of the reference against itself was written")
	}
	for _, want := range []string{"bff / sunflow completion over 2 matrices", "BANDWIDTH", "800Gbps", "10µs"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	// 2 bandwidths × 2 delays × 2 matrices × 2 algorithms.
	if !strings.Contains(stderr, "sweep") || !strings.Contains(stderr, "/16)") {
		t.Errorf("--progress on drew no bar counting to 16 on stderr: %q", stderr)
	}
}

func TestSweepSameOutputForAnyJobs(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	for _, dir := range []string{one, two} {
		jobs := 1
		if dir == two {
			jobs = 2
		}
		_, stderr, code, err := runCLI(t, smallSweep(dir, jobs)...)
		if code != 0 {
			t.Fatalf("--jobs %d: exit %d: %v", jobs, code, err)
		}
		if stderr != "" {
			t.Errorf("--progress auto drew on a standard error that is not a terminal: %q", stderr)
		}
	}
	for _, name := range []string{"sweep.csv", "speedup-bff.svg", "completion-vs-lower-bound.svg"} {
		a, errA := os.ReadFile(filepath.Join(one, name))
		b, errB := os.ReadFile(filepath.Join(two, name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between --jobs 1 and --jobs 2 (%v, %v)", name, errA, errB)
		}
	}
}

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bandwidth without unit", []string{"--bandwidth", "800Gbps,800"}, `--bandwidth "800"`},
		{"negative delay", []string{"--reconfig", "10ns,-1us"}, `--reconfig "-1us"`},
		{"empty delay list", []string{"--reconfig", ","}, `--reconfig ","`},
		{"unknown algorithm", []string{"--algo", "sunflow,nope"}, `--algo "nope"`},
		{"reference not swept", []string{"--algo", "sunflow,bff", "--reference", "tetris"}, `--reference "tetris"`},
		{"negative jobs", []string{"--jobs", "-1"}, "--jobs -1"},
		{"bad progress mode", []string{"--progress", "maybe"}, `--progress "maybe"`},
		{"missing demand file", []string{"--demand", filepath.Join(dir, "none.csv")}, "--demand"},
		{"matrix out of range", []string{"--matrix", "999"}, "--matrix 999"},
		{"unknown fabric", []string{"--fabric", "torus"}, `--fabric "torus"`},
		{"unknown reconfiguration model", []string{"--reconfig-model", "serial"}, `--reconfig-model "serial"`},
		{"controller without a unit", []string{"--reconfig-model", "controller", "--tr", "5"}, `--tr "5"`},
		{"output is a file", []string{"--out", sweepTrace}, "--out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"sweep", "--demand", sweepTrace, "--out", dir, "--algo", "sunflow,bff", "--reference", "sunflow"}, tc.args...)
			_, _, code, err := runCLI(t, args...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("exit %d, err %v; want exit 2 naming %s", code, err, tc.want)
			}
		})
	}
	if _, _, code, err := runCLI(t, "sweep", "--algo", "sunflow", "--reference", "sunflow"); code != 2 || !strings.Contains(err.Error(), "--out") {
		t.Errorf("no --out: exit %d, err %v", code, err)
	}
}

// readSweepCSV returns sweep.csv's completion and lower-bound sums by (bandwidth, reconfig, algorithm).
func readSweepCSV(t *testing.T, dir string) map[string][2]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, r := range recs[1:] {
		c, err1 := strconv.ParseFloat(r[6], 64)
		lb, err2 := strconv.ParseFloat(r[7], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("row %v: %v %v", r, err1, err2)
		}
		out[r[0]+" "+r[2]+" "+r[4]] = [2]float64{c, lb}
	}
	return out
}

// With --measured, transfers take the measured times: a table measuring every pair at 400 Gbps
// doubles every transfer of an 800 Gbps sweep, and with α_r = 0 every completion exactly, while
// the schedules stay as planned for 800 Gbps; the lower bounds follow the measured times (a
// table proportional in bytes: bytes/400 Gbps), so they double too.
func TestSweepMeasuredTimes(t *testing.T) {
	plain, measured := t.TempDir(), t.TempDir()
	args := func(dir string) []string {
		return []string{"sweep", "--demand", sweepTrace, "--algo", "sunflow,bff", "--reference", "sunflow",
			"--bandwidth", "800Gbps", "--reconfig", "0", "--out", dir}
	}
	if _, _, code, err := runCLI(t, args(plain)...); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if _, _, code, err := runCLI(t, append(args(measured), "--measured", "testdata/sweep/measured-400gbps.csv")...); code != 0 {
		t.Fatalf("--measured: exit %d: %v", code, err)
	}
	a, b := readSweepCSV(t, plain), readSweepCSV(t, measured)
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("rows: %v and %v, want 2 each", a, b)
	}
	for k, va := range a {
		vb := b[k]
		if math.Abs(vb[0]/va[0]-2) > 1e-9 || math.Abs(vb[1]/va[1]-2) > 1e-9 {
			t.Errorf("%s: completion %g → %g, lower bound %g → %g (want both ×2)", k, va[0], vb[0], va[1], vb[1])
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--measured", filepath.Join(measured, "none.csv")}, "--measured"},
		{[]string{"--measured", "testdata/sweep/measured-400gbps.csv", "--calibration", "x.json"}, "pick one transfer model"},
		{[]string{"--gpu-map", "0,1"}, "--gpu-map"},
	} {
		if _, _, code, err := runCLI(t, append(args(measured), bad.args...)...); code != 2 || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: exit %d, err %v; want exit 2 naming %s", bad.args, code, err, bad.want)
		}
	}
}

// --fabric, the Tetris ablations and the controller model reach every cell, and the manifest
// says so: Tetris with --no-partial on a crossbar, under T_r = 1 µs and T_w = 10 µs, is its own
// reference (ratio 1) and never beats the lower bounds computed with T_r + T_w.
func TestSweepFabricAblationAndController(t *testing.T) {
	dir := t.TempDir()
	_, _, code, err := runCLI(t, "sweep", "--demand", sweepTrace, "--algo", "tetris,snb", "--bandwidth", "800Gbps",
		"--reconfig", "1us", "--fabric", "crossbar", "--no-partial", "--reconfig-model", "controller", "--tr", "1us", "--tw", "10us",
		"--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m sweep.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Fabric != "crossbar" || len(m.Ablations) != 1 || m.Ablations[0] != "no-partial" || !strings.HasPrefix(m.Reconfig, "controller T_r=1µs T_w=10µs") {
		t.Errorf("manifest fabric %q, ablations %v, reconfiguration %q", m.Fabric, m.Ablations, m.Reconfig)
	}
	for k, v := range readSweepCSV(t, dir) {
		if v[0] < v[1] {
			t.Errorf("%s: completion sum %g below the lower-bound sum %g", k, v[0], v[1])
		}
	}
}

// sweep --tenants: the columns are algorithm@allocation with each tenant's completion sum; under
// strict, tenant 0-3's completion is the same whatever tenant 4-7 sends (B's file holds two
// different matrices, A's one); two shards merge to the unsharded CSV byte for byte; and the
// flags that do not go with tenants are refused.
func TestSweepTenants(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "b.json") // one layer on 4 GPUs: its dispatch and combine matrices
	if out, code, err := cli(t, "trace", "gen", "--model", "mixtral-8x7b", "--gpus", "4", "--layers", "1", "--seed", "3", "-o", b); code != 0 {
		t.Fatalf("trace gen: exit %d: %v\n%s", code, err, out)
	}
	tenants := "0-3=../../examples/tenant-a.csv,4-7=" + b
	args := func(out string, more ...string) []string {
		return append([]string{"sweep", "--tenants", tenants, "--fabric-ports", "16", "--allocation", "shared,strict", "--algo", "tetris,bvn",
			"--bandwidth", "800Gbps", "--reconfig", "10us", "--out", out}, more...)
	}
	full := filepath.Join(dir, "full")
	if out, code, err := cli(t, args(full)...); code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	csvBytes, err := os.ReadFile(filepath.Join(full, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(csvBytes)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(recs[0], ",")
	if !strings.Contains(head, "ratio_vs_tetris@shared") || !strings.HasSuffix(head, "tenant_0-3_completion_sum_seconds,tenant_4-7_completion_sum_seconds") {
		t.Fatalf("header %q", head)
	}
	var algos []string
	for _, r := range recs[1:] {
		algos = append(algos, r[4])
		if r[5] != "2" {
			t.Errorf("row %v: want 2 matrices (B's two, A's one each time)", r)
		}
	}
	if got := strings.Join(algos, ","); got != "tetris@shared,bvn@shared,tetris@strict,bvn@strict" {
		t.Errorf("algorithms %s", got)
	}
	// Strict: A's completion over the two matrices is twice one matrix's; a one-matrix sweep of
	// A with B idle gives that one matrix's completion.
	idle := filepath.Join(dir, "idle.csv")
	if err := os.WriteFile(idle, []byte("0,0,0,0\n0,0,0,0\n0,0,0,0\n0,0,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(dir, "alone")
	aloneArgs := []string{"sweep", "--tenants", "0-3=../../examples/tenant-a.csv,4-7=" + idle, "--fabric-ports", "16", "--allocation", "strict",
		"--algo", "tetris,bvn", "--bandwidth", "800Gbps", "--reconfig", "10us", "--out", alone}
	if out, code, err := cli(t, aloneArgs...); code != 0 {
		t.Fatalf("A alone: exit %d: %v\n%s", code, err, out)
	}
	aloneRecs := readCSV(t, filepath.Join(alone, "sweep.csv"))
	for i, r := range recs[3:] {
		two, _ := strconv.ParseFloat(r[12], 64)
		one, _ := strconv.ParseFloat(aloneRecs[1+i][12], 64)
		if two != one+one || one <= 0 {
			t.Errorf("%s: A's strict completion over two matrices %g, alone %g: B reached A", r[4], two, one)
		}
	}
	var shards []string
	for k := range 2 {
		d := filepath.Join(dir, "shard-"+strconv.Itoa(k))
		if out, code, err := cli(t, args(d, "--shard", strconv.Itoa(k)+"/2")...); code != 0 {
			t.Fatalf("shard %d: exit %d: %v\n%s", k, code, err, out)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(dir, "merged")
	if out, code, err := cli(t, append(append([]string{"sweep", "merge"}, shards...), "--out", merged)...); code != 0 {
		t.Fatalf("merge: exit %d: %v\n%s", code, err, out)
	}
	if got, err := os.ReadFile(filepath.Join(merged, "sweep.csv")); err != nil || !bytes.Equal(got, csvBytes) {
		t.Errorf("merged CSV differs from the unsharded one (%v)", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{args(filepath.Join(dir, "x"), "--demand", "../../examples/demand.csv"), "--demand: not with --tenants"},
		{args(filepath.Join(dir, "x"), "--max-memory", "1GiB"), "--max-memory: not with --tenants"},
		{args(filepath.Join(dir, "x"), "--allocation", "wide"), "is not shared, centre or strict"},
		{args(filepath.Join(dir, "x"), "--algo", "tetris,snb"), "snb plans on the crossbar"},
		{[]string{"sweep", "--allocation", "strict", "--out", filepath.Join(dir, "x")}, "--allocation: only with --tenants"},
	} {
		if _, code, err := cli(t, c.args...); code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", c.args[len(c.args)-2:], code, err, c.want)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
