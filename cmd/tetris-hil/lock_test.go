package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/outlock"
)

// Two runs into one output at once: the second is refused, naming the first's pid and command,
// and leaves the first's files alone; once the first is gone, its lock is not in the way.
func TestOutputLockTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	for _, c := range []struct {
		name string
		args func(out string) []string
		dir  bool // the lock is on a directory (else on a file)
	}{
		{"sweep", func(out string) []string {
			return []string{"sweep", "--out", out, "--progress", "off"}
		}, true},
		{"calibrate", func(out string) []string {
			return []string{"calibrate", "--fake", "--reps", "400", "--progress", "off", "-o", out}
		}, false},
		{"replay", func(out string) []string {
			return []string{"replay", "--fake", "--matrix", "0", "--algo", "all", "--reconfig", "50ms", "--out", out}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "out")
			if !c.dir {
				out += ".json"
			}
			first, stderr := startMain(t, c.args(out)...)
			done := make(chan error, 1)
			go func() { done <- first.Wait() }()
			lockPath := outlock.PathFor(out, c.dir)
			for h, _ := outlock.Read(out, c.dir); h.PID != first.Process.Pid; h, _ = outlock.Read(out, c.dir) {
				select {
				case err := <-done:
					t.Fatalf("the first run ended (%v) before taking its lock; stderr %q", err, stderr.String())
				case <-time.After(time.Millisecond):
				}
			}
			second := exec.Command(os.Args[0], append([]string{"--log-level", "error"}, c.args(out)...)...)
			second.Env = append(os.Environ(), envBeMain+"=1")
			msg, _ := second.CombinedOutput()
			if code := second.ProcessState.ExitCode(); code != 1 {
				t.Errorf("second run: exit %d, want 1; %s", code, msg)
			}
			for _, want := range []string{"in use by another run", fmt.Sprintf("pid %d", first.Process.Pid), c.name} {
				if !strings.Contains(string(msg), want) {
					t.Errorf("second run's message %q lacks %q", msg, want)
				}
			}
			if strings.Count(strings.TrimSpace(string(msg)), "\n") != 0 {
				t.Errorf("second run's message is not one line: %q", msg)
			}
			if h, ok := outlock.Read(out, c.dir); !ok || h.PID != first.Process.Pid {
				t.Errorf("the lock now says %+v (%v): the refused run touched it", h, ok)
			}
			first.Process.Signal(syscall.SIGINT)
			<-done
			if exists(lockPath)() {
				t.Errorf("%s left after the first run stopped", lockPath)
			}
		})
	}
}

// A lock left by a killed run (SIGKILL: no cleanup) is taken over, with a message.
func TestOutputLockStaleTakenOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	out := filepath.Join(t.TempDir(), "out")
	first, _ := startMain(t, "sweep", "--out", out, "--progress", "off")
	lockPath := outlock.PathFor(out, true)
	pid := first.Process.Pid
	waitForHolder(t, out, true, pid)
	first.Process.Kill()
	first.Wait()
	if !exists(lockPath)() {
		t.Fatal("SIGKILL left no lock file: nothing to take over")
	}
	msg, code, err := cli(t, "sweep", "--out", out, "--algo", "tetris,bvn", "--bandwidth", "100Gbps", "--reconfig", "1us", "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d (%v): %s", code, err, msg)
	}
	if want := fmt.Sprintf("took over the stale lock %s of pid %d", lockPath, pid); !strings.Contains(msg, want) {
		t.Errorf("output lacks %q:\n%s", want, msg)
	}
}

// waitForHolder waits until the lock of out names pid.
func waitForHolder(t *testing.T, out string, dir bool, pid int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if h, _ := outlock.Read(out, dir); h.PID == pid {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never took the lock of %s", pid, out)
		}
	}
}
