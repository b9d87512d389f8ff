package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/worker"
)

// --log-format console into a file or pipe (not a terminal) writes no colour codes.
func TestConsoleLogNoColourOffTerminal(t *testing.T) {
	var b bytes.Buffer
	l, err := newLogger(&b, "debug", "console")
	if err != nil {
		t.Fatal(err)
	}
	l.Info().Str("elapsed", "1ms").Msg("hello")
	if strings.Contains(b.String(), "\x1b[") || !strings.Contains(b.String(), "hello") {
		t.Errorf("console log off a terminal: %q", b.String())
	}
}

// At debug level, serial exchanges and finished runs are logged, with units on the times.
func TestDebugLogs(t *testing.T) {
	var b bytes.Buffer
	l, err := newLogger(&b, "debug", "json")
	if err != nil {
		t.Fatal(err)
	}
	saved := logger
	logger = l
	t.Cleanup(func() { logger = saved })
	debugSerial("/dev/ttyUSB0", "SW 1:C", "OK", 1500*time.Microsecond, nil)
	debugSerial("/dev/ttyUSB0", "*OPC?", "", time.Second, errors.New("no reply"))
	debugWorker(worker.Hello{PID: 42, Engine: "fake", CPUs: "0-3", Threads: 5}, 3*time.Millisecond)
	progress, finish := newProgress(&bytes.Buffer{}, "off", "emulate", 2)
	progress(1, 2)
	finish()
	out := b.String()
	for _, want := range []string{`"sent":"SW 1:C"`, `"reply":"OK"`, `"took":"1.5ms"`, `"error":"no reply"`, `"message":"emulate: run finished"`, `"elapsed":"`, `"message":"worker started"`, `"pid":42`, `"took":"3ms"`, `"cpus":"0-3"`} {
		if !strings.Contains(out, want) {
			t.Errorf("debug log lacks %s:\n%s", want, out)
		}
	}
	b.Reset()
	logger = logger.Level(1) // info
	if p, _ := newProgress(&bytes.Buffer{}, "off", "emulate", 2); p != nil {
		t.Error("a progress callback with neither a bar nor debug logging")
	}
}

// Standard error into a file (not a terminal), by default: no info chatter, no JSON, no
// progress frames; only the note of the directory it made. --log-level info shows the chatter
// as plain console lines, and JSON only with --log-format json.
func TestStderrOffTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	small := []string{"--algo", "tetris,bvn", "--bandwidth", "100Gbps", "--reconfig", "1us,10us"}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), envBeMain+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stderr.String()
	}
	dir := t.TempDir()
	got := run(append([]string{"sweep", "--out", filepath.Join(dir, "a")}, small...)...)
	if want := "tetris-hil: created directory " + filepath.Join(dir, "a") + "\n"; got != want {
		t.Errorf("default stderr %q, want only %q", got, want)
	}
	got = run(append([]string{"sweep", "--out", filepath.Join(dir, "a"), "--log-level", "info"}, small...)...)
	if !strings.Contains(got, " INF sweep ") || strings.Contains(got, "{") || strings.Contains(got, "\r") || strings.Contains(got, "\x1b[") {
		t.Errorf("--log-level info: want plain console lines, got %q", got)
	}
	got = run(append([]string{"sweep", "--out", filepath.Join(dir, "a"), "--log-level", "info", "--log-format", "json"}, small...)...)
	if !strings.Contains(got, `"level":"info"`) || !strings.Contains(got, `"message":"sweep"`) {
		t.Errorf("--log-format json: want JSON lines, got %q", got)
	}
}
