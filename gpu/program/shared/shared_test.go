package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program"
)

// roleEnv starts this test binary as a worker process: it runs the job in the file named by its
// argument and exits 0, 3 when the host aborted it, 1 otherwise.
const roleEnv = "TETRIS_HIL_SHARED_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) != "" {
		os.Exit(workerMain(os.Args[1]))
	}
	os.Exit(m.Run())
}

func workerMain(path string) int {
	b, err := os.ReadFile(path)
	var j Job
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err == nil {
		err = j.Run(context.Background())
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrAborted):
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// procs is a run's worker processes.
type procs struct {
	cmds  []*exec.Cmd
	exits []chan error
}

// alive reports the first worker process that exited with an error.
func (ps *procs) alive() error {
	for w, ch := range ps.exits {
		select {
		case err := <-ch:
			ch <- err // keep it for wait
			if err != nil {
				return fmt.Errorf("worker process %d: %w", w, err)
			}
		default:
		}
	}
	return nil
}

// wait waits for every process and returns their exit codes.
func (ps *procs) wait(t *testing.T, within time.Duration) []int {
	t.Helper()
	codes := make([]int, len(ps.cmds))
	deadline := time.After(within)
	for w, ch := range ps.exits {
		select {
		case err := <-ch:
			ch <- err
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				codes[w] = ee.ExitCode()
			} else if err != nil {
				codes[w] = -1
			}
		case <-deadline:
			for _, c := range ps.cmds {
				_ = c.Process.Kill()
			}
			t.Fatalf("worker process %d still running %v after the host returned", w, within)
		}
	}
	return codes
}

// start creates the shared memory for p and starts one worker process per entry of split.
func start(t *testing.T, p *program.Program, split [][]int, dur []int64) (*Mem, *procs) {
	return startWith(t, p, split, dur, func(*Work) {})
}

// startSpin is start with the workers spinning only (Work.SpinOnly) when spinOnly.
func startSpin(t *testing.T, p *program.Program, split [][]int, dur []int64, spinOnly bool) (*Mem, *procs) {
	return startWith(t, p, split, dur, func(w *Work) { w.SpinOnly = spinOnly })
}

// startWith is start with each worker's Work adjusted by set.
func startWith(t *testing.T, p *program.Program, split [][]int, dur []int64, set func(*Work)) (*Mem, *procs) {
	t.Helper()
	dir := t.TempDir()
	d := Dims{Endpoints: len(p.Endpoints), Circuits: p.Circuits, Signals: len(p.Signals), Workers: len(split)}
	m, err := Create(filepath.Join(dir, "replay.shm"), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ps := &procs{}
	for w, eps := range split {
		job := Job{Path: m.Path, Dims: d, Program: p, Work: Work{Worker: w, Endpoints: eps, Durations: dur, ArmTimeout: 20 * time.Second}}
		set(&job.Work)
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		jf := filepath.Join(dir, fmt.Sprintf("job%d.json", w))
		if err := os.WriteFile(jf, b, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], jf)
		cmd.Env = append(os.Environ(), roleEnv+"=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ch := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
			}
			ch <- err
		}()
		ps.cmds, ps.exits = append(ps.cmds, cmd), append(ps.exits, ch)
	}
	t.Cleanup(func() {
		for _, c := range ps.cmds {
			_ = c.Process.Kill()
		}
	})
	return m, ps
}

// parallel is the paper's reconfiguration model: every command lasts alpha from its request.
type parallel float64

func (a parallel) Command(t float64, _ int) (float64, float64) { return t, t + float64(a) }

// chain is a program over four endpoints whose dependencies cross every worker: endpoint e
// copies circuits e and 4+e; circuit 4+e waits for circuit (e+1) mod 4 of the next endpoint and
// for its own previous one, and circuits 6 and 7 also for signal 0, requested when circuits 0
// and 1 have ended.
func chain(batch bool) *program.Program {
	p := &program.Program{Circuits: 8, Batch: batch, Signals: []program.Signal{{Requires: []int32{0, 1}, After: -1, Changes: 1}}}
	for e := range int32(4) {
		second := program.Step{Circuit: 4 + e, Dst: (e + 1) % 4, Bytes: 1, After: []int32{e, (e + 1) % 4}}
		if e >= 2 {
			second.Signals = []int32{0}
		}
		p.Endpoints = append(p.Endpoints, []program.Step{{Circuit: e, Dst: (e + 1) % 4, Bytes: 1}, second})
	}
	return p
}

func durations(p *program.Program, f func(c int32) int64) []int64 {
	d := make([]int64, p.Circuits)
	for c := range d {
		d[c] = f(int32(c))
	}
	return d
}

// Across three worker processes the stamps keep the programs' semantics: every circuit starts
// at or after its target, which is the latest end of its waits (and the start); every copy lasts
// exactly its time; and no circuit starts or ends before the virtual-time fake, the emulator's
// equal, says it can.
func TestProcessesKeepSemantics(t *testing.T) {
	for _, tc := range []struct{ batch, spinOnly bool }{{true, false}, {false, false}, {true, true}} {
		t.Run(fmt.Sprintf("batch=%v,spin-only=%v", tc.batch, tc.spinOnly), func(t *testing.T) {
			p := chain(tc.batch)
			dur := durations(p, func(c int32) int64 { return int64(200+100*c) * 1000 }) // 0.2–0.9 ms
			m, ps := startSpin(t, p, [][]int{{0, 3}, {1}, {2}}, dur, tc.spinOnly)
			const alpha = 300e-6
			h := &Host{Program: p, Station: parallel(alpha), Alive: ps.alive, Timeout: 20 * time.Second, SpinOnly: tc.spinOnly}
			st, err := h.Run(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			if codes := ps.wait(t, 10*time.Second); fmt.Sprint(codes) != "[0 0 0]" {
				t.Fatalf("worker exit codes %v", codes)
			}
			// The fake devices' clock is CLOCK_MONOTONIC: offset 0 must lie within each
			// measurement's uncertainty.
			if len(h.Offsets) != 3 {
				t.Fatalf("offsets %+v", h.Offsets)
			}
			for _, o := range h.Offsets {
				if o.OffsetNS < -o.UncertaintyNS || o.OffsetNS > o.UncertaintyNS || o.MinRTTNS <= 0 || o.Samples != 16 {
					t.Errorf("worker %d: offset %d ns ± %d ns (RTT %d ns) excludes 0", o.Worker, o.OffsetNS, o.UncertaintyNS, o.MinRTTNS)
				}
			}
			pred := predict(t, p, dur, alpha)
			checkSemantics(t, p, st, dur, alpha)
			for c := range p.Circuits {
				if st.Start[c] < pred.Start[c]-1e-9 || st.End[c] < pred.End[c]-1e-9 {
					t.Errorf("circuit %d ran %g..%g s, before the prediction %g..%g s", c, st.Start[c], st.End[c], pred.Start[c], pred.End[c])
				}
			}
			if len(st.Commands) != 1 || st.Commands[0].Requested < max(st.End[0], st.End[1])-1e-9 {
				t.Errorf("commands %+v, circuits 0 and 1 ended at %g, %g", st.Commands, st.End[0], st.End[1])
			}
		})
	}
}

// predict is the virtual-time fake on the same program and copy times.
func predict(t *testing.T, p *program.Program, dur []int64, alpha float64) *program.Stamps {
	t.Helper()
	// The fake's copy time is a function of the pair and the size: key it on the circuit
	// through Bytes (the circuit number + 1).
	q := *p
	q.Endpoints = make([][]program.Step, len(p.Endpoints))
	for e, steps := range p.Endpoints {
		for _, s := range steps {
			s.Bytes = int64(s.Circuit) + 1
			q.Endpoints[e] = append(q.Endpoints[e], s)
		}
	}
	st, err := program.Fake{Virtual: true, Duration: func(_, _ int, b int64) (float64, error) { return float64(dur[b-1]) * 1e-9, nil }}.Execute(context.Background(), &q, parallel(alpha))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkSemantics checks the stamps against the program's definition.
func checkSemantics(t *testing.T, p *program.Program, st *program.Stamps, dur []int64, alpha float64) {
	t.Helper()
	for _, steps := range p.Endpoints {
		prevEnd := 0.0
		for _, s := range steps {
			c := s.Circuit
			want := 0.0
			for _, a := range s.After {
				want = max(want, st.End[a])
			}
			for _, g := range s.Signals {
				want = max(want, st.Commands[st.CommandOf[g]].End)
			}
			if math.Abs(st.Target[c]-want) > 1e-9 {
				t.Errorf("circuit %d: target %g s, its waits ended at %g s", c, st.Target[c], want)
			}
			if st.Start[c] < st.Target[c] || st.Start[c] < prevEnd {
				t.Errorf("circuit %d starts at %g s, before its target %g s or its endpoint's previous end %g s", c, st.Start[c], st.Target[c], prevEnd)
			}
			if d := st.End[c] - st.Start[c]; math.Abs(d-float64(dur[c])*1e-9) > 1e-9 {
				t.Errorf("circuit %d copied for %g s, want %g s", c, d, float64(dur[c])*1e-9)
			}
			prevEnd = st.End[c]
		}
	}
	for _, cmd := range st.Commands {
		if math.Abs(cmd.End-cmd.Start-alpha) > 1e-9 {
			t.Errorf("command %+v does not last α_r = %g s", cmd, alpha)
		}
	}
}

// A program that waits on itself is reported as a deadlock, naming an endpoint, and every
// worker stops (aborted) instead of spinning until the deadline.
func TestProcessesDeadlock(t *testing.T) {
	for name, p := range map[string]*program.Program{
		"circuits": {Circuits: 3, Endpoints: [][]program.Step{
			{{Circuit: 0, Dst: 1}, {Circuit: 1, Dst: 1, After: []int32{2}}},
			{{Circuit: 2, Dst: 0, After: []int32{1}}},
		}},
		// Circuit 1 waits for a signal that is requested only once circuit 1 has ended.
		"signal": {Circuits: 2, Batch: true, Endpoints: [][]program.Step{
			{{Circuit: 0, Dst: 1}},
			{{Circuit: 1, Dst: 0, Signals: []int32{0}}},
		}, Signals: []program.Signal{{Requires: []int32{1}, After: -1, Changes: 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			m, ps := start(t, p, [][]int{{0}, {1}}, durations(p, func(int32) int64 { return 1000 }))
			t0 := time.Now()
			_, err := (&Host{Program: p, Station: parallel(1e-6), Alive: ps.alive, Timeout: 30 * time.Second}).Run(context.Background(), m)
			if !errors.Is(err, ErrDeadlock) || !strings.Contains(err.Error(), "endpoint 1") {
				t.Fatalf("Run: %v, want a deadlock at endpoint 1", err)
			}
			if time.Since(t0) > 10*time.Second {
				t.Errorf("the deadlock took %v to find", time.Since(t0))
			}
			if codes := ps.wait(t, 10*time.Second); fmt.Sprint(codes) != "[3 3]" && fmt.Sprint(codes) != "[0 3]" {
				t.Errorf("worker exit codes %v, want endpoint 1's worker aborted (3)", codes)
			}
		})
	}
}

// Cancelling the host's context mid-run aborts every worker: they exit promptly, aborted, with
// nothing left spinning, also while they sleep through a long copy (Work.Sleep).
func TestProcessesCancel(t *testing.T) {
	for _, sleep := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprintf("sleep=%v", sleep), func(t *testing.T) { testCancel(t, sleep) })
	}
}

func testCancel(t *testing.T, sleep time.Duration) {
	p := chain(true)
	m, ps := startWith(t, p, [][]int{{0, 1}, {2, 3}}, durations(p, func(int32) int64 { return int64(20 * time.Second) }),
		func(w *Work) { w.Sleep = sleep })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := (&Host{Program: p, Station: parallel(1e-3), Alive: ps.alive, Timeout: time.Minute}).Run(ctx, m)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v, want the context's error", err)
	}
	if !m.Aborted() {
		t.Error("the host returned without aborting the run")
	}
	if codes := ps.wait(t, 5*time.Second); fmt.Sprint(codes) != "[3 3]" {
		t.Errorf("worker exit codes %v, want both aborted (3)", codes)
	}
}

// A worker process that dies stops the run with its error instead of a wait until the deadline.
func TestProcessesWorkerDies(t *testing.T) {
	p := chain(true)
	m, ps := start(t, p, [][]int{{0, 1}, {2, 3}}, durations(p, func(int32) int64 { return int64(20 * time.Second) }))
	var once sync.Once
	alive := func() error {
		if m.Start() != 0 {
			once.Do(func() { _ = ps.cmds[1].Process.Kill() })
		}
		return ps.alive()
	}
	_, err := (&Host{Program: p, Station: parallel(1e-3), Alive: alive, Timeout: time.Minute}).Run(context.Background(), m)
	if err == nil || !strings.Contains(err.Error(), "worker process 1") {
		t.Fatalf("Run: %v, want worker process 1's death", err)
	}
	if codes := ps.wait(t, 5*time.Second); codes[0] != 3 {
		t.Errorf("worker exit codes %v, want the survivor aborted (3)", codes)
	}
}

// With Apply, the watching thread carries each command out on the switches at the command's
// start, and the circuits that wait for it start only once Apply has returned, even when the
// switches are slower than the station's model.
func TestProcessesApply(t *testing.T) {
	p := chain(true)
	dur := durations(p, func(int32) int64 { return int64(200 * time.Microsecond) })
	m, ps := start(t, p, [][]int{{0, 1}, {2, 3}}, dur)
	const alpha, slow = 100e-6, 3 * time.Millisecond
	var calls []program.Command
	h := &Host{Program: p, Station: parallel(alpha), Alive: ps.alive, Timeout: 20 * time.Second}
	h.Apply = func(ctx context.Context, cmd program.Command) error {
		calls = append(calls, cmd)
		time.Sleep(slow)
		return nil
	}
	st, err := h.Run(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	ps.wait(t, 10*time.Second)
	if len(calls) != 1 || len(st.Commands) != 1 {
		t.Fatalf("Apply called %d times, %d commands", len(calls), len(st.Commands))
	}
	cmd := st.Commands[0]
	if cmd.End < cmd.Start+slow.Seconds() {
		t.Errorf("command %+v ends before Apply (%v) could have returned", cmd, slow)
	}
	for _, c := range []int{6, 7} {
		if st.Start[c] < cmd.End || st.Target[c] < cmd.End {
			t.Errorf("circuit %d starts at %g s (target %g), before the switches were set at %g s", c, st.Start[c], st.Target[c], cmd.End)
		}
	}
	checkSemantics(t, p, st, dur, cmd.End-cmd.Start)
}
