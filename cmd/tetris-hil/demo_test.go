package main

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// fetches matches anything a browser would load from elsewhere.
var fetches = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|@import|<script|<link`)

// runDemo runs the demo once per test binary (it is the slowest command test) into dir.
func demoDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	start := time.Now()
	// In a process of its own, as a user runs it (its workers are this test binary too): the
	// plots' font caches and the report would otherwise stay in this process, whose memory the
	// peak-RSS tests' children inherit at vfork.
	p := cliProcess("demo", "--out", dir, "--progress", "off")
	b, err := p.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	t.Logf("demo took %v", time.Since(start))
	for _, want := range []string{
		"every file goes to " + dir,
		"$ tetris-hil calibrate --fake",
		"ALGORITHM  COMPLETION (ms)  /BW BOUND  /RECONF BOUND  TETRIS SPEEDUP",
		"worst matrix for Tetris: ",
		"bvn / tetris completion over 30 matrices",
		"wrote " + filepath.Join(dir, "report.html"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// A row per algorithm, Tetris's speedup over itself 1.
	if !regexp.MustCompile(`(?m)^\s+tetris\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+1\.000$`).MatchString(out) {
		t.Errorf("no tetris row with speedup 1.000:\n%s", out)
	}
	for _, f := range []string{"calibration.json", "calibration.png", "emulate.json", "commands.json", "report.html",
		"sweep/sweep.csv", "sweep/speedup-bvn.png", "sweep/completion-vs-lower-bound.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if g, _ := filepath.Glob(filepath.Join(dir, "gantt-m*-tetris.svg")); len(g) != 1 {
		t.Errorf("Gantt charts of tetris: %v", g)
	}
	return dir
}

func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole pipeline (about a second)")
	}
	dir := demoDir(t)
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if m := fetches.FindString(string(page)); m != "" {
		t.Errorf("report.html fetches something: %q", m)
	}
	for _, want := range []string{"Calibration", "Results", "Gantt charts", "Bandwidth × α_r sweep", "reproduce: <code>tetris-hil sweep"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	t.Run("chromium", func(t *testing.T) { screenshot(t, filepath.Join(dir, "report.html")) })
}

// screenshot loads the page in headless Chromium (Debian's chromium package) and checks that it
// rendered: a PNG of the window's size that is not blank. TETRIS_HIL_SCREENSHOT=FILE keeps it.
func screenshot(t *testing.T, page string) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install -y chromium): the report is not rendered")
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	if keep := os.Getenv("TETRIS_HIL_SCREENSHOT"); keep != "" {
		shot = keep
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size=1400,3000", "file://"+abs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", shot, err)
	}
	b := img.Bounds()
	if b.Dx() != 1400 || b.Dy() != 3000 {
		t.Errorf("screenshot %dx%d, want 1400x3000", b.Dx(), b.Dy())
	}
	// Rendered content: a good share of the pixels are not white.
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0xe000 {
				dark++
			}
		}
	}
	if total := (b.Dx() / 7) * (b.Dy() / 7); dark < total/50 {
		t.Errorf("screenshot nearly blank: %d of %d sampled pixels not white", dark, total)
	}
	t.Logf("screenshot %s", shot)
	// The decoded 1400×3000 image is ~17 MB: give it back to the OS, since the peak-RSS tests'
	// children (started by vfork) count this process's resident memory as theirs.
	img = nil
	debug.FreeOSMemory()
}
