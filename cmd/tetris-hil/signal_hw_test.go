package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate"
	"github.com/tetris-hil/tetris-hil/hil"
	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
)

// stopSignalsTested are the signals that must stop a run touching hardware as Ctrl-C does: a
// closed terminal (SIGHUP) and SIGQUIT too, not only SIGINT and SIGTERM.
var stopSignalsTested = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalPoint is when, in a run, the signal is sent.
type signalPoint struct {
	name  string
	ready func(dir string) func() bool
}

// checkSignalled checks what every signalled run owes: exit 128 + the signal and one line on
// standard error saying so.
func checkSignalled(t *testing.T, sig syscall.Signal, code int, took time.Duration, stderr string) {
	t.Helper()
	t.Logf("%v: exit %d %v after the signal; stderr %q", sig, code, took.Round(time.Millisecond), stderr)
	if code != 128+int(sig) {
		t.Errorf("exit %d, want %d (128 + %v); stderr %q", code, 128+int(sig), sig, stderr)
	}
	// "created directory" is what the run said before it started; the signal gets one line.
	said := regexp.MustCompile(`(?m)^tetris-hil: created directory .*\n`).ReplaceAllString(stderr, "")
	if lines := strings.Count(strings.TrimSpace(said), "\n") + 1; lines != 1 {
		t.Errorf("%d lines on stderr, want one: %q", lines, stderr)
	}
}

// Every signal, at the start and in the middle of a bench, ends switch bench with the board put
// safe (its log ends in SAFE answered OK), every switch reading back BAR, and no bench file.
func TestSwitchBenchEverySignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	w, err := switchctl.LoadWiring(serialWiring)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range stopSignalsTested {
		for _, pt := range []struct {
			name     string
			commands int // the board has seen at least this many commands
		}{{"at once", 0}, {"mid-bench", 40}} {
			t.Run(sig.String()+" "+pt.name, func(t *testing.T) {
				p := startBoard(t, boardemu.Config{Latency: 200 * time.Microsecond, Settle: time.Millisecond})
				out := filepath.Join(t.TempDir(), "bench.json")
				cmd, stderr := startMain(t, "switch", "bench", "--wiring", serialWiring, "--port", p.Path, "--rounds", "1000000", "-o", out)
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("stderr %q", stderr.String())
					}
				})
				code, took := signalAndWait(t, cmd, sig, func() bool { return len(p.Board().Log().Entries()) >= pt.commands })
				checkSignalled(t, sig, code, took, stderr.String())
				if _, err := os.Stat(out); err == nil {
					t.Error("an interrupted bench wrote its file")
				}
				es := p.Board().Log().Entries()
				if len(es) > 0 {
					if last := es[len(es)-1]; last.Cmd != "SAFE" || last.Reply != "OK" {
						t.Errorf("the board's log ends in %+v, want SAFE answered OK", last)
					}
				}
				for _, s := range w.Switches {
					if st := p.Board().State(s.Channel); st != "BAR" {
						t.Errorf("switch %s (channel %d) is %s after %v, want BAR", s.Switch, s.Channel, st, sig)
					}
				}
			})
		}
	}
}

// Every signal, early and mid-replay, ends a replay through the switch controller with the
// switches put safe (the change log ends in a safe-state command setting every switch of the
// map to bar), a manifest that says interrupted (never running, never complete), and only whole
// JSON files.
func TestReplayWiringEverySignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	unsetCUDAVisible(t)
	w, err := switchctl.LoadWiring(serialWiring)
	if err != nil {
		t.Fatal(err)
	}
	points := []signalPoint{
		{"first run started", func(dir string) func() bool { return exists(filepath.Join(dir, "m0-bvn.predicted.json")) }},
		{"mid-run", func(dir string) func() bool {
			at := exists(filepath.Join(dir, "m0-bvn.predicted.json"))
			var since time.Time
			return func() bool {
				if since.IsZero() && at() {
					since = time.Now()
				}
				return !since.IsZero() && time.Since(since) > 300*time.Millisecond
			}
		}},
	}
	for _, sig := range stopSignalsTested {
		for _, pt := range points {
			t.Run(sig.String()+" "+pt.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "run")
				cmd, stderr := startMain(t, "replay", "--fake", "--unpinned", "--in-process", "--matrix", "0", "--algo", "bvn",
					"--bandwidth", "8Gbps", "--fake-alpha", "20ms", "--wiring", serialWiring, "--out", dir)
				code, took := signalAndWait(t, cmd, sig, pt.ready(dir))
				checkSignalled(t, sig, code, took, stderr.String())
				var m hil.Manifest
				b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if m.Complete || m.Status != "interrupted" {
					t.Errorf("manifest: complete %v, status %q; want interrupted", m.Complete, m.Status)
				}
				es, _ := os.ReadDir(dir)
				for _, e := range es {
					if strings.HasSuffix(e.Name(), ".json") {
						if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil || !json.Valid(b) {
							t.Errorf("%s is not whole JSON (%v)", e.Name(), err)
						}
					}
				}
				log, err := switchctl.ReadChangeLog(filepath.Join(dir, "switch-log.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				safe := map[switchctl.Addr]bool{}
				for i := len(log) - 1; i >= 0 && log[i].Halt; i-- {
					safe[log[i].Switch] = log[i].State == switchctl.Bar
				}
				for _, s := range w.Switches {
					if !safe[s.Switch] {
						t.Errorf("the change log (%d entries) does not end with switch %s put to bar", len(log), s.Switch)
						break
					}
				}
			})
		}
	}
}

// Every signal, as the workers start and mid-measurement, ends calibrate with no calibration
// file (nothing looks complete) and, once a step was measured, a partial file marked partial
// that --resume accepts.
func TestCalibrateEverySignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	unsetCUDAVisible(t)
	points := []signalPoint{
		{"starting", func(string) func() bool { return func() bool { return true } }},
		{"mid-measurement", func(dir string) func() bool {
			at := exists(filepath.Join(dir, "cal.json.partial"))
			var since time.Time
			return func() bool {
				if since.IsZero() && at() {
					since = time.Now()
				}
				return !since.IsZero() && time.Since(since) > 200*time.Millisecond
			}
		}},
	}
	for _, sig := range stopSignalsTested {
		for _, pt := range points {
			t.Run(sig.String()+" "+pt.name, func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "cal.json")
				cmd, stderr := startMain(t, "calibrate", "--fake", "--fake-gpus", "3", "--sizes", "4KiB..1GiB", "--per-octave", "1",
					"--reps", "5", "--start-margin", "100ms", "--progress", "off", "-o", out)
				code, took := signalAndWait(t, cmd, sig, pt.ready(dir))
				checkSignalled(t, sig, code, took, stderr.String())
				if _, err := os.Stat(out); err == nil {
					t.Error("an interrupted calibration wrote the calibration file")
				}
				b, err := os.ReadFile(out + ".partial")
				if os.IsNotExist(err) && pt.name == "starting" {
					return // stopped before the first step: nothing to resume
				}
				if err != nil {
					t.Fatal(err)
				}
				var p calibrate.Partial
				if err := json.Unmarshal(b, &p); err != nil || !p.Partial || len(p.Steps) == 0 {
					t.Errorf("partial file: %v, partial %v, %d steps", err, p.Partial, len(p.Steps))
				}
			})
		}
	}
}

// A signal while a large calibration is read and parsed (a million pairs: seconds of work) ends
// the run at once, not once the file is parsed.
func TestSignalWhileParsingCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("writes an 80 MB calibration")
	}
	path := filepath.Join(t.TempDir(), "cal1000.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	const g = 1000
	bw.WriteString(`{"version":1,"inventory":{"gpus":[`)
	for i := range g {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, `{"index":%d,"name":"fake"}`, i)
	}
	bw.WriteString(`]},"pairs":[`)
	first := true
	for s := range g {
		for d := range g {
			if s == d {
				continue
			}
			if !first {
				bw.WriteByte(',')
			}
			first = false
			fmt.Fprintf(bw, `{"src":%d,"dst":%d,"alpha_seconds":1e-6,"beta_seconds_per_byte":1e-10,"r2":1}`, s, d)
		}
	}
	bw.WriteString(`]}`)
	if err := errors.Join(bw.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	cmd, stderr := startMain(t, "emulate", "--matrix", "0", "--algo", "tetris", "--calibration", path)
	code, took := signalAndWait(t, cmd, syscall.SIGTERM, after(300*time.Millisecond))
	checkSignalled(t, syscall.SIGTERM, code, took, stderr.String())
	if took > time.Second {
		t.Errorf("exited %v after SIGTERM: it waited for the parse", took)
	}
}
