package report

import (
	"bytes"
	stdhtml "html"
	"regexp"
	"strings"
	"testing"
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
		{t.TempDir(), "no emulate JSON, sweep.json or chart"},
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
