package outlock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecondLockRefusedNamingHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := Dir(dir, "tetris-hil sweep --out x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dir(dir, "tetris-hil sweep --out x")
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock: %v, want ErrHeld", err)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "tetris-hil sweep --out x", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	l.Release()
	if _, err := os.Stat(filepath.Join(dir, DirLockName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after Release: %v", err)
	}
	l2, err := Dir(dir, "again")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if l2.TookOver != "" {
		t.Errorf("a released lock is not stale, got %q", l2.TookOver)
	}
	l2.Release()
	l2.Release() // twice is harmless
}

func TestFileLockBesideFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cal.json")
	l, err := File(out, "calibrate")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if l.Path() != filepath.Join(dir, ".cal.json.lock") {
		t.Errorf("lock at %s", l.Path())
	}
	if h, ok := Read(out, false); !ok || h.PID != os.Getpid() || h.Command != "calibrate" {
		t.Errorf("Read = %+v, %v", h, ok)
	}
	if _, err := File(out, "calibrate"); !errors.Is(err, ErrHeld) {
		t.Errorf("second lock of the file: %v", err)
	}
}

// A lock file left by a process that is gone (killed before it could release) is taken over,
// and the taker is told whose it was.
func TestStaleLockTakenOver(t *testing.T) {
	dir := t.TempDir()
	sh := exec.Command("true")
	if err := sh.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	dead := sh.ProcessState.Pid()
	content := fmt.Sprintf("%d\n2026-01-01T00:00:00Z\ntetris-hil sweep --out old\n", dead)
	if err := os.WriteFile(filepath.Join(dir, DirLockName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Dir(dir, "new")
	if err != nil {
		t.Fatalf("stale lock not taken over: %v", err)
	}
	defer l.Release()
	if !strings.Contains(l.TookOver, fmt.Sprintf("pid %d", dead)) || !strings.Contains(l.TookOver, "sweep --out old") {
		t.Errorf("TookOver = %q, want the dead pid and its command", l.TookOver)
	}
	if h, _ := Read(dir, true); h.PID != os.Getpid() || h.Command != "new" {
		t.Errorf("lock file now says %+v", h)
	}
}
