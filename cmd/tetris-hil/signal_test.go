package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
)

// signalRole is a child that checks signalContext's promise: after the first SIGINT has cancelled
// the context, a second one ends the process at once (by the signal) although the run goes on.
const signalRole = "signal-twice"

func signalTwice([]string) int {
	ctx, stop := signalContext(context.Background())
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	<-ctx.Done()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	time.Sleep(10 * time.Second)
	return 0
}

// stopDeadline is how long a signalled process may take to exit: the promise is a second, the
// slack is for a loaded test machine.
const stopDeadline = 5 * time.Second

// startMain starts the test binary as the real tetris-hil (main, signal handling included) and
// returns once its signal handlers are in place.
func startMain(t *testing.T, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--log-level", "error"}, args...)...)
	ready := filepath.Join(t.TempDir(), "signals-ready")
	cmd.Env = append(os.Environ(), envBeMain+"=1", envSignalsReady+"="+ready)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(60 * time.Second); !exists(ready)(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child never installed its signal handlers; stderr %q", stderr.String())
		}
	}
	return cmd, &stderr
}

// signalAndWait sends sig once ready reports true (polled) and returns the exit status and how
// long the process took to exit after the signal.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, ready func() bool) (int, time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); !ready(); time.Sleep(2 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("exited (%v) before the signal could be sent", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the phase to interrupt never started")
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-done:
	case <-time.After(stopDeadline):
		t.Fatalf("still running %v after %v", stopDeadline, sig)
	}
	return cmd.ProcessState.ExitCode(), time.Since(start)
}

func after(d time.Duration) func() bool {
	at := time.Now().Add(d)
	return func() bool { return time.Now().After(at) }
}

func exists(path string) func() bool {
	return func() bool { _, err := os.Stat(path); return err == nil }
}

// The first SIGINT or SIGTERM stops every phase (planning, running, writing, generating) within
// the deadline, exits 130 or 143, and leaves only whole files with a manifest that says the run
// is incomplete.
func TestSignalStopsEveryPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		want  int
		args  func(dir string) []string
		ready func(dir string) func() bool
		check func(t *testing.T, dir string)
	}{
		{"sweep running, SIGINT", syscall.SIGINT, 130,
			func(dir string) []string {
				return []string{"sweep", "--out", filepath.Join(dir, "out"), "--progress", "off",
					"--bandwidth", "100Gbps,200Gbps,400Gbps,800Gbps", "--reconfig", "10ns,100ns,1us,10us,100us,1ms,10ms"}
			},
			// Signalled once a unit is kept: a fixed delay sent it before the first unit ended
			// under the race detector, leaving nothing to check.
			func(dir string) func() bool { return exists(filepath.Join(dir, "out", "sweep-partial.json")) },
			func(t *testing.T, dir string) {
				// Only the finished units, kept for --resume: no results beside them.
				if es, _ := os.ReadDir(filepath.Join(dir, "out")); len(es) != 1 || es[0].Name() != "sweep-partial.json" {
					t.Errorf("an interrupted sweep left %v, want sweep-partial.json alone", es)
				}
			}},
		{"sweep running, SIGTERM", syscall.SIGTERM, 143,
			func(dir string) []string {
				return []string{"sweep", "--out", filepath.Join(dir, "out"), "--progress", "off",
					"--bandwidth", "100Gbps,200Gbps,400Gbps,800Gbps", "--reconfig", "10ns,100ns,1us,10us,100us,1ms,10ms"}
			},
			func(string) func() bool { return after(300 * time.Millisecond) },
			nil},
		{"emulate writing timelines, SIGINT", syscall.SIGINT, 130,
			func(dir string) []string {
				return []string{"emulate", "--json", filepath.Join(dir, "report.json"), "--timeline", filepath.Join(dir, "tl")}
			},
			func(dir string) func() bool {
				return exists(filepath.Join(dir, "tl", experiment.TimelinesManifestName))
			},
			func(t *testing.T, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "report.json")); err == nil {
					t.Error("the report was written after the signal")
				}
				m, err := experiment.ReadTimelinesManifest(filepath.Join(dir, "tl"))
				if err != nil || m == nil || m.Complete {
					t.Fatalf("manifest %+v (%v): want one marked incomplete", m, err)
				}
				es, _ := os.ReadDir(filepath.Join(dir, "tl"))
				if len(es) > len(m.Files) {
					t.Errorf("%d files for %d listed: wrote on after the signal", len(es), len(m.Files))
				}
				for _, e := range es {
					b, err := os.ReadFile(filepath.Join(dir, "tl", e.Name()))
					if err != nil || !json.Valid(b) {
						t.Errorf("%s is not whole JSON (%v)", e.Name(), err)
					}
				}
				if len(es) >= len(m.Files) {
					t.Errorf("all %d files written: the signal came too late to test anything", len(es))
				}
			}},
		{"trace gen generating, SIGTERM", syscall.SIGTERM, 143,
			func(dir string) []string {
				return []string{"trace", "gen", "--model", "custom", "--hidden", "4096", "--experts", "128", "--top-k", "8",
					"--gpus", "512", "--layers", "4", "--tokens-per-gpu", "100000", "-o", filepath.Join(dir, "big.json")}
			},
			func(string) func() bool { return after(500 * time.Millisecond) },
			func(t *testing.T, dir string) {
				if es, _ := os.ReadDir(dir); len(es) != 0 {
					t.Errorf("an interrupted trace gen left %v", es)
				}
			}},
		{"schedule planning, SIGINT", syscall.SIGINT, 130,
			func(dir string) []string {
				return []string{"schedule", "--algo", "tetris+", "--demand", filepath.Join(dir, "..", "g.json"), "--matrix", "0",
					"-o", filepath.Join(dir, "s.json")}
			},
			func(string) func() bool { return after(300 * time.Millisecond) },
			func(t *testing.T, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "s.json")); err == nil {
					t.Error("an interrupted schedule was written")
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "run")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(c.name, "schedule") {
				_, code, err := cli(t, "trace", "gen", "--model", "custom", "--experts", "256", "--top-k", "8", "--gpus", "256",
					"--layers", "1", "--expert-per-gpu", "-o", filepath.Join(root, "g.json"))
				if code != 0 {
					t.Fatal(err)
				}
			}
			cmd, stderr := startMain(t, c.args(dir)...)
			code, took := signalAndWait(t, cmd, c.sig, c.ready(dir))
			t.Logf("%v: exit %d %v after the signal; stderr %q", c.sig, code, took.Round(time.Millisecond), stderr.String())
			if code != c.want {
				t.Errorf("exit status %d, want %d; stderr %q", code, c.want, stderr.String())
			}
			// Besides the note of the output directory it made, one line: the error.
			msg := regexp.MustCompile(`(?m)^tetris-hil: created directory .*\n`).ReplaceAllString(stderr.String(), "")
			if lines := strings.Count(strings.TrimSpace(msg), "\n") + 1; lines != 1 {
				t.Errorf("%d lines on stderr, want one: %q", lines, stderr.String())
			}
			if c.check != nil {
				c.check(t, dir)
			}
		})
	}
}

// After the first signal the default handler is back: a second one kills the process at once.
func TestSecondSignalKills(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envBeCLI+"="+signalRole)
	start := time.Now()
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want killed by SIGINT", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT || time.Since(start) > stopDeadline {
		t.Errorf("child ended %v after %v: want killed by the second SIGINT at once", ws, time.Since(start))
	}
}

// exitCode maps a signal stop to 128 + the signal, whatever the command's error says.
func TestExitCodeSignals(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&interrupted{syscall.SIGINT}, 130},
		{&interrupted{syscall.SIGTERM}, 143},
		{errors.Join(&interrupted{syscall.SIGINT}, &usageError{errors.New("x")}), 130},
		{&usageError{errors.New("x")}, 2},
		{&exitError{code: 1}, 1},
		{errors.New("x"), 1},
		{nil, 0},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
