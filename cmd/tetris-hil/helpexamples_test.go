package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helpExampleOrder is the order in which the help examples run, all in one directory: a later
// command's examples read what an earlier one's wrote (trace gen's t.json, calibrate's cal.json,
// schedule's s.json, switch bench's bench.json), as a reader following the help would have them.
// Commands not listed run after these.
var helpExampleOrder = [][]string{
	{"trace", "gen"}, {"trace", "export"}, {"trace", "show"}, {"trace", "import"},
	{"calibrate"}, {"calibrate", "show"}, {"schedule"}, {"verify"}, {"emulate"},
	{"switch", "emulate"}, {"switch"}, {"switch", "set"}, {"switch", "get"}, {"switch", "bench"}, {"switch", "safe"},
	{"broadcast"}, {"broadcast", "sweep"}, {"gpu-bench"}, {"devices"},
	{"sweep"}, {"sweep", "merge"}, {"replay"}, {"reproduce"}, {"report"}, {"demo"},
}

// hardwareCommand is a command that, without --fake, needs GPUs or a switch board this test does
// not have: its examples run with --fake added (the same flags otherwise, checked the same way).
var hardwareCommand = regexp.MustCompile(`^tetris-hil (calibrate|devices|gpu-bench|replay|switch (set|get|bench|safe))( |$)`)

// withFake adds --fake to each hardware command of an example line that lacks it.
func withFake(line string) (string, bool) {
	parts := regexp.MustCompile(`(&&|;|\|)`).Split(line, -1)
	seps := regexp.MustCompile(`(&&|;|\|)`).FindAllString(line, -1)
	changed := false
	for i, p := range parts {
		cmd := strings.TrimSpace(p)
		if env := regexp.MustCompile(`^(\w+=\S+ )+`).FindString(cmd); env != "" {
			cmd = strings.TrimPrefix(cmd, env)
		}
		m := hardwareCommand.FindStringSubmatch(cmd)
		if m == nil || strings.Contains(p, "--fake") || strings.HasPrefix(cmd, "tetris-hil calibrate show") {
			continue
		}
		at := strings.Index(p, m[0][:len(strings.TrimSpace(m[0]))]) + len(strings.TrimSpace(m[0]))
		parts[i] = p[:at] + " --fake" + p[at:]
		changed = true
	}
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(seps) {
			b.WriteString(seps[i])
		}
	}
	return b.String(), changed
}

func TestWithFake(t *testing.T) {
	for in, want := range map[string]string{
		"tetris-hil devices --json > inventory.json":                                       "tetris-hil devices --fake --json > inventory.json",
		"CUDA_VISIBLE_DEVICES=4,5 tetris-hil devices --check-workers":                      "CUDA_VISIBLE_DEVICES=4,5 tetris-hil devices --fake --check-workers",
		"tetris-hil calibrate show cal.json":                                               "tetris-hil calibrate show cal.json",
		"tetris-hil calibrate --fake -o c.json && tetris-hil emulate --calibration c.json": "tetris-hil calibrate --fake -o c.json && tetris-hil emulate --calibration c.json",
		"tetris-hil trace gen -o t.json && tetris-hil replay --schedule s.json --out r":    "tetris-hil trace gen -o t.json && tetris-hil replay --fake --schedule s.json --out r",
		"tetris-hil switch set 0:3=cross --wiring w.yaml":                                  "tetris-hil switch set --fake 0:3=cross --wiring w.yaml",
		"tetris-hil switch emulate --wiring w.yaml":                                        "tetris-hil switch emulate --wiring w.yaml",
	} {
		if got, _ := withFake(in); got != want {
			t.Errorf("withFake(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every example in every command's --help runs as printed (hardware commands with --fake added)
// against the built binary, in one directory with the repository's examples/ beside it, and
// exits 0; switch emulate (a server) and switch set --hold run until interrupted.
func TestHelpExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs every --help example")
	}
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "tetris-hil"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// demo's example opens the report with xdg-open: a stand-in that checks the file is there.
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\ntest -s \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	root := newRootCmd()
	seen := map[string]bool{}
	var order [][]string
	for _, p := range append(helpExampleOrder, allCommands()...) {
		if k := strings.Join(p, " "); !seen[k] {
			seen[k] = true
			order = append(order, p)
		}
	}
	n := 0
	for _, path := range order {
		c, _, err := root.Find(path)
		if err != nil || strings.Join(path, " ") != strings.TrimPrefix(c.CommandPath(), "tetris-hil ") && len(path) > 0 {
			t.Fatalf("no command %v (%v)", path, err)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			n++
			if !strings.Contains(line, "tetris-hil ") {
				t.Errorf("%s: example %q does not run tetris-hil", c.CommandPath(), line)
				continue
			}
			run, faked := withFake(line)
			if strings.HasPrefix(line, "tetris-hil switch emulate") || strings.Contains(line, " --hold") {
				runServerExample(t, dir, env, run)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", run)
			cmd.Dir, cmd.Env = dir, env
			start := time.Now()
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Errorf("%s --help example failed: %v\n  %s\n%s", c.CommandPath(), err, run, out)
				continue
			}
			note := ""
			if faked {
				note = " (with --fake)"
			}
			t.Logf("%v%s: %s", time.Since(start).Round(time.Millisecond), note, line)
		}
	}
	if n < 50 {
		t.Errorf("only %d help examples found", n)
	}
}

// runServerExample starts a server example (switch emulate), checks it is serving after a
// while, and stops it as Ctrl-C would: it must exit 130.
func runServerExample(t *testing.T, dir string, env []string, line string) {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Errorf("server example ended (%v) before it was stopped:\n  %s\n%s", err, line, out.String())
		return
	case <-time.After(1500 * time.Millisecond):
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Errorf("server example did not stop on SIGINT: %s", line)
		return
	}
	// switch emulate prints its device; set --hold says it holds.
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(out.String(), "/dev/") && !strings.Contains(out.String(), "holding") {
		t.Errorf("server example: exit %d (want 130), output %q: %s", code, out.String(), line)
	}
	t.Logf("served, stopped by SIGINT: %s", line)
}
