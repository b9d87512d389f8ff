package report

import (
	"bytes"
	stdhtml "html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fetches matches anything a browser would load from elsewhere.
var fetches = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|@import|<script|<link`)

func TestWriteFixture(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "testdata/run"); err != nil {
		t.Fatal(err)
	}
	// Attribute values come entity-escaped ("+" as &#43;); compare what a browser reads.
	html := stdhtml.UnescapeString(b.String())
	if m := fetches.FindString(html); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
	for _, want := range []string{
		"data:image/png;base64,",     // calibration and heatmap PNGs
		"data:image/svg+xml;base64,", // the Gantt SVG (no PNG twin)
		"reproduce: <code>tetris-hil emulate --matrix 1 --gantt gantt.svg</code>", // commands.json
		"<td>t.json</td>", "abababab", // inputs with hashes
		"The matrix that takes Tetris longest: <b>1</b>",             // tetris 3 ms on matrix 1
		"the best baseline over the trace: <b>bvn</b>",               // bvn 6 ms, sunflow 6.5 ms
		"<td>tetris</td><td>4.0000</td><td>1.429</td><td>1.176</td>", // totals: 4 ms over 2.8 and 3.4 ms
		"bandwidths 100Gbps, 800Gbps; α_r 1µs, 100µs",
	} {
		if !strings.Contains(html, strings.ReplaceAll(want, "<td>t.json</td>", "<td><code>t.json</code></td>")) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The heatmap's SVG twin is left out for its PNG; the one heatmap is shown once.
	if n := strings.Count(html, `alt="sweep/speedup-bvn`); n != 1 {
		t.Errorf("sweep/speedup-bvn appears %d times, want once (the PNG)", n)
	}
}

func TestWriteRefuses(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{t.TempDir(), "is not a run directory: no emulate JSON"},
		{"testdata/run/emulate.json", "not a directory"},
		{"testdata/missing", "no such file"},
	} {
		var b bytes.Buffer
		if err := Write(&b, c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write(%s) = %v, want an error with %q", c.dir, err, c.want)
		}
	}
}

func TestWorstAndBest(t *testing.T) {
	e, err := ReadEmulate("testdata/run/emulate.json")
	if err != nil {
		t.Fatal(err)
	}
	if w := e.WorstMatrix(); w.Index != 1 {
		t.Errorf("worst matrix %d, want 1 (tetris 3 ms there, 1 ms on 0)", w.Index)
	}
	if b := e.BestBaseline(); b != "bvn" {
		t.Errorf("best baseline %q, want bvn", b)
	}
	if n := e.Matrices(); n != 2 {
		t.Errorf("%d matrices, want 2", n)
	}
}

// A replay directory (tetris-hil replay --fake --fake-gpus 4 on hand4, tetris and bvn at
// α_r = 1 ms) shows the summary's live and predicted completions, the two figures drawn from the
// run records, and each run's switch log with switches named STAGE:INDEX.
func TestWriteReplay(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "testdata/replay"); err != nil {
		t.Fatal(err)
	}
	html := stdhtml.UnescapeString(b.String())
	if m := fetches.FindString(html); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
	for _, want := range []string{
		"<h2>Live replay</h2>",
		"<td>0 tetris</td><td>", "<td>0 bvn</td><td>",
		`alt="live vs predicted completion"`, `alt="start differences"`,
		"Switch log: 0 tetris", "<td><code>2:1</code></td>",
		"<td>hand4.csv</td>",
	} {
		if !strings.Contains(html, strings.ReplaceAll(want, "<td>hand4.csv</td>", "cmd/tetris-hil/testdata/emulate/hand4.csv")) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The differences drawn are hil's: over every circuit, the largest |live − predicted start|
	// is the summary's worst.
	r, err := readReplay("testdata/replay/summary.json", "summary.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range r.Runs {
		ds, sw, err := compareRecords("testdata/replay/m0-"+run.Algorithm+".live.json", "testdata/replay/m0-"+run.Algorithm+".predicted.json")
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, d := range ds {
			if math.Abs(d) > math.Abs(worst) {
				worst = d
			}
		}
		if len(ds) != run.Circuits || worst != run.StartDifference.Worst {
			t.Errorf("%s: %d differences, worst %g; summary: %d circuits, worst %g", run.Algorithm, len(ds), worst, run.Circuits, run.StartDifference.Worst)
		}
		if len(sw) == 0 || len(run.Switches) != len(sw) {
			t.Errorf("%s: switch log of %d rows shown of %d", run.Algorithm, len(run.Switches), len(sw))
		}
	}
}

// A reproduce directory shows its paper-vs-ours tables.
func TestWriteReproduce(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "testdata/reproduce"); err != nil {
		t.Fatal(err)
	}
	html := stdhtml.UnescapeString(b.String())
	for _, want := range []string{
		"<h2>Reproduction of the Tetris paper's figures</h2>",
		"<caption>Figure 6 (Tetris §3): variant / Tetris completion at 800Gbps, α_r = 100ns</caption>",
		"<td>Tetris --no-partial (matching-wide barriers) / Tetris</td><td>not stated (longer: Figure 6(a))</td><td>1.002</td>",
		"<h3>fig7: ",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// A figure's chart sits with its tables, after its heading, not under "Other figures".
	fig7, chart := strings.Index(html, "<h3>fig7: "), strings.Index(html, `alt="fig7/completion-by-workload.png"`)
	if chart < fig7 || fig7 < 0 || strings.Contains(html, "<h2>Other figures</h2>") {
		t.Errorf("fig7's chart at %d, its heading at %d; want it under the heading", chart, fig7)
	}
}

// Hostile run directories: each is refused with one error naming the file, quickly and without
// reading what it refuses (a FIFO is not opened for a blocking read, an image is sized by stat).
func TestWriteRefusesHostile(t *testing.T) {
	withRun := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "commands.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) string
		want  string
	}{
		{"the file system root", func(*testing.T) string { return "/" }, "not a run directory"},
		{"a FIFO named *.json", func(t *testing.T) string {
			dir := withRun(t)
			if err := syscall.Mkfifo(filepath.Join(dir, "x.json"), 0o644); err != nil {
				t.Skip(err)
			}
			return dir
		}, "x.json: not a regular file (a FIFO)"},
		{"a FIFO named commands.json", func(t *testing.T) string {
			dir := t.TempDir()
			if err := syscall.Mkfifo(filepath.Join(dir, "commands.json"), 0o644); err != nil {
				t.Skip(err)
			}
			return dir
		}, "commands.json: not a regular file (a FIFO)"},
		{"a 5 GiB sparse PNG", func(t *testing.T) string {
			dir := withRun(t)
			f, err := os.Create(filepath.Join(dir, "big.png"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(5 << 30); err != nil {
				t.Skip(err)
			}
			return dir
		}, "big.png is 5GiB, above the limit of 8MiB for input of kind image (raise it with --max-input image=SIZE)"},
		{"a 300 MiB sparse emulate JSON", func(t *testing.T) string {
			dir := withRun(t)
			if err := os.Truncate(filepath.Join(dir, "commands.json"), 300<<20); err != nil {
				t.Skip(err)
			}
			return dir
		}, "commands.json is 300MiB, above the limit of 256MiB for input of kind report-json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := c.setup(t)
			start := time.Now()
			var b bytes.Buffer
			err := Write(&b, dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Write(%s) = %v, want an error with %q", dir, err, c.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// A sweep's CSV with state-change columns gets the report's state-change table; one written
// before the columns were, or whose columns are all empty (merged from files without them),
// gets none.
func TestWriteSweepWear(t *testing.T) {
	dir := t.TempDir()
	manifest, err := os.ReadFile("testdata/run/sweep/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sweep.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	const head = "bandwidth,bandwidth_bytes_per_second,reconfig,reconfig_seconds,algorithm,matrices,completion_sum_seconds,lower_bound_sum_seconds,ratio_vs_tetris,completion_over_lower_bound"
	for _, c := range []struct {
		csv  string
		want bool
	}{
		{head + ",state_changes,state_changes_max\n100Gbps,1.25e+10,1µs,1e-06,tetris,2,0.004,0.0028,1,1.4285714285714286,582,41\n100Gbps,1.25e+10,1µs,1e-06,tetris@w4,2,0.005,0.0028,1.25,1.7857142857142858,458,34\n", true},
		{head + "\n100Gbps,1.25e+10,1µs,1e-06,tetris,2,0.004,0.0028,1,1.4285714285714286\n", false},
		{head + ",state_changes,state_changes_max\n100Gbps,1.25e+10,1µs,1e-06,tetris,2,0.004,0.0028,1,1.4285714285714286,,\n", false},
	} {
		if err := os.WriteFile(filepath.Join(dir, "sweep.csv"), []byte(c.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Write(&b, dir); err != nil {
			t.Fatal(err)
		}
		html := stdhtml.UnescapeString(b.String())
		row := "<td>100Gbps</td><td>1µs</td><td>tetris@w4</td><td>1.786</td><td>458</td><td>34</td>"
		if got := strings.Contains(html, "Switch state changes over the pass"); got != c.want || c.want && !strings.Contains(html, row) {
			t.Errorf("CSV %q: state-change table %v, want %v (row %q)", c.csv[len(head):], got, c.want, row)
		}
	}
}

// A multi-tenant sweep's table has a column per tenant (its completion over the pass, in ms), as
// the manifest names the tenants.
func TestWriteSweepTenants(t *testing.T) {
	dir := t.TempDir()
	manifest := `{"version": 1, "tool": "tetris-hil test", "inputs": [], "matrices": 1, "algorithms": ["tetris@shared", "tetris@strict"], "reference": "tetris@shared",
 "bandwidths_bytes_per_second": [1e11], "reconfigs_seconds": [1e-05], "transfer_model": "bandwidth", "reconfig_model": "parallel",
 "tenants": ["0-3", "4-7"], "allocations": ["shared", "strict"], "results": "sweep.csv"}`
	const csv = "bandwidth,bandwidth_bytes_per_second,reconfig,reconfig_seconds,algorithm,matrices,completion_sum_seconds,lower_bound_sum_seconds,ratio_vs_tetris@shared,completion_over_lower_bound,state_changes,state_changes_max,tenant_0-3_completion_sum_seconds,tenant_4-7_completion_sum_seconds\n" +
		"800Gbps,1e+11,10µs,1e-05,tetris@strict,1,0.00019121856,0.00019121856,1,1,14,3,0.0001639392,0.00019121856\n"
	for name, body := range map[string]string{"sweep.json": manifest, "sweep.csv": csv} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := Write(&b, dir); err != nil {
		t.Fatal(err)
	}
	html := stdhtml.UnescapeString(b.String())
	for _, want := range []string{"<th>tenant 0-3 (ms)</th><th>tenant 4-7 (ms)</th>",
		"<td>tetris@strict</td><td>1.000</td><td>14</td><td>3</td><td>0.1639</td><td>0.1912</td>", "under the allocations shared, strict"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sweep.csv"), []byte(strings.ReplaceAll(csv, "tenant_4-7", "tenant_8-11")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, dir); err == nil || !strings.Contains(err.Error(), "no column tenant_4-7_completion_sum_seconds") {
		t.Errorf("a CSV without the manifest's tenant: %v", err)
	}
}
