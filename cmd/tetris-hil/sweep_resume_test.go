package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/sweep"
)

// A sweep stopped by Ctrl-C keeps its finished runs; a fresh run over them is refused, naming
// --resume and --overwrite; --resume finishes the grid, and every file then equals an
// uninterrupted sweep's byte for byte.
func TestSweepInterruptedThenResumed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default grid three times")
	}
	root := t.TempDir()
	grid := []string{"--progress", "off", "--algo", "tetris,bvn,sunflow,maxweight"}
	whole, cut := filepath.Join(root, "whole"), filepath.Join(root, "cut")
	if out, code, err := cli(t, append([]string{"sweep", "--out", whole}, grid...)...); code != 0 {
		t.Fatalf("uninterrupted: exit %d (%v)\n%s", code, err, out)
	}

	cmd, stderr := startMain(t, append([]string{"sweep", "--out", cut}, grid...)...)
	partial := filepath.Join(cut, sweep.PartialName)
	code, _ := signalAndWait(t, cmd, syscall.SIGINT, exists(partial))
	if code != 130 || !strings.Contains(stderr.String(), "--resume") {
		t.Fatalf("interrupted: exit %d, stderr %q; want 130 naming --resume", code, stderr)
	}
	kept, err := sweep.ReadPartial(partial)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.Results) == 0 || len(kept.Results) >= kept.Units {
		t.Fatalf("kept %d of %d units: the signal came too early or too late to test a resume", len(kept.Results), kept.Units)
	}
	t.Logf("kept %d of %d units", len(kept.Results), kept.Units)

	_, code, err = cli(t, append([]string{"sweep", "--out", cut}, grid...)...)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("fresh run over a partial sweep: exit %d (%v), want 2 naming --resume and --overwrite", code, err)
	}
	_, code, err = cli(t, append([]string{"sweep", "--out", cut, "--resume", "--reconfig", "1us"}, grid...)...)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "reconfigs_seconds") {
		t.Errorf("resume on another grid: exit %d (%v), want 2 naming the field", code, err)
	}
	out, code, err := cli(t, append([]string{"sweep", "--out", cut, "--resume"}, grid...)...)
	if code != 0 || !strings.Contains(out, "resuming") {
		t.Fatalf("resume: exit %d (%v)\n%s", code, err, out)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("partial file left after the sweep finished: %v", err)
	}
	sameFiles(t, whole, cut)
}

func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	as, _ := os.ReadDir(a)
	bs, _ := os.ReadDir(b)
	if len(as) != len(bs) || len(as) == 0 {
		t.Fatalf("%s has %d files, %s %d", a, len(as), b, len(bs))
	}
	for _, e := range as {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs (%v)", e.Name(), err)
		}
	}
}
