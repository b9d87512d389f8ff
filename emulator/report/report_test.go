package report

import (
	"bytes"
	stdhtml "html"
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
		{t.TempDir(), "is not a run directory: no emulate JSON, sweep.json, commands.json or manifest"},
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
