package hil

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/hil/delay"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

// plan schedules built-in matrix k with each algorithm.
func plan(t testing.TB, k int, algos ...string) []Job {
	t.Helper()
	d := builtin(t, k)
	var jobs []Job
	for _, a := range algos {
		sc, err := schedules.Lookup(a)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sc.Schedule(context.Background(), d, planOpts())
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, Job{Schedule: s, Demand: d, Matrix: emulator.MatrixRef{Index: k, Layer: -1, Label: "built-in #0"}})
	}
	return jobs
}

func schedulesOf(jobs []Job) []*schedules.Schedule {
	var ss []*schedules.Schedule
	for _, j := range jobs {
		ss = append(ss, j.Schedule)
	}
	return ss
}

type restorer struct{ calls int }

func (r *restorer) Restore() error { r.calls++; return nil }

func sessionConfig(t *testing.T, jobs []Job) (Config, *restorer) {
	gpuOf := identity(8)
	ws := openEngines(t, gpuOf, testModel, schedulesOf(jobs)...)
	sw, log := fakeSwitches(t, 8)
	clocks := &restorer{}
	return Config{
		Dir:  filepath.Join(t.TempDir(), "run"),
		Jobs: jobs,
		Env:  Env{Transfers: ws, Switches: sw, SwitchLog: log, Injector: delay.Injector{SleepThreshold: time.Millisecond}},
		Predict: emulator.Config{Transfer: FakeTransferModel(testModel, gpuOf),
			Reconfig: SerialControllerModel(testTR.Seconds(), testTW.Seconds())},
		LiveTransfer: "fake engine in process", LiveReconfig: "fake switch controller",
		Manifest: Manifest{Engine: "fake", EngineOptions: testModel.String(), Flags: map[string]string{"fake": "true"}},
		Clocks:   clocks,
	}, clocks
}

// readJSON checks that path holds one valid JSON value and decodes it into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("%s is not valid JSON", path)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

func TestRunDirectory(t *testing.T) {
	cfg, clocks := sessionConfig(t, plan(t, 0, "tetris", "bvn", "snb"))
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if clocks.calls != 1 {
		t.Errorf("clocks restored %d times, want once", clocks.calls)
	}
	var m Manifest
	readJSON(t, filepath.Join(cfg.Dir, "manifest.json"), &m)
	if !m.Complete || m.Status != "complete" || len(m.Runs) != 3 || m.Clocks == "" {
		t.Fatalf("manifest: complete %v, status %q, %d runs, clocks %q", m.Complete, m.Status, len(m.Runs), m.Clocks)
	}
	var s Summary
	readJSON(t, filepath.Join(cfg.Dir, "summary.json"), &s)
	if !s.Complete || len(s.Runs) != 3 || len(sum.Runs) != 3 {
		t.Fatalf("summary: complete %v, %d runs", s.Complete, len(s.Runs))
	}
	for i, r := range s.Runs {
		rf := m.Runs[i]
		if r.Algorithm != rf.Algorithm || r.CompletionSeconds <= 0 || r.PredictedCompletionSeconds <= 0 || r.LiveOverPredicted < 1-1e-9 {
			t.Errorf("run %d: %+v", i, r)
		}
		// Through a switch controller the host drives the walk, and says what that cost.
		if r.Execution != ExecHostDriven || !(r.HarnessCost.Worst > 0) || r.HarnessCost.Median > r.HarnessCost.P99 {
			t.Errorf("run %d: execution %q, harness cost %+v", i, r.Execution, r.HarnessCost)
		}
		t.Logf("%s: live %.4g s, predicted %.4g s, starts off by median %.3g s, p99 %.3g s, worst %+.3g s", r.Algorithm,
			r.CompletionSeconds, r.PredictedCompletionSeconds, r.StartDifference.Median, r.StartDifference.P99, r.StartDifference.Worst)
		sch, err := schedules.LoadSchedule(filepath.Join(cfg.Dir, rf.Schedule))
		if err != nil {
			t.Fatal(err)
		}
		live, err := emulator.LoadRunRecord(filepath.Join(cfg.Dir, rf.Live))
		if err != nil {
			t.Fatal(err)
		}
		if live.Source != emulator.SourceLive || live.Result.Completion != r.CompletionSeconds {
			t.Errorf("%s: live record source %q, completion %g", rf.Live, live.Source, live.Result.Completion)
		}
		if vs := schedules.VerifyTimeline(sch, live.Timeline); len(vs) > 0 {
			t.Errorf("%s: %v", rf.Live, vs[0])
		}
		pred, err := emulator.LoadRunRecord(filepath.Join(cfg.Dir, rf.Predicted))
		if err != nil {
			t.Fatal(err)
		}
		if pred.Source != emulator.SourceEmulator || pred.Result.Completion != r.PredictedCompletionSeconds {
			t.Errorf("%s: source %q, completion %g", rf.Predicted, pred.Source, pred.Result.Completion)
		}
		var trace struct{ TraceEvents []json.RawMessage }
		readJSON(t, filepath.Join(cfg.Dir, rf.Trace), &trace)
		if len(trace.TraceEvents) == 0 {
			t.Errorf("%s: no trace events", rf.Trace)
		}
	}
	if _, err := switchctl.ReadChangeLog(filepath.Join(cfg.Dir, "switch-log.jsonl")); err != nil {
		t.Error(err)
	}
	// A second session into the same directory is refused before anything is replayed.
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("a second run into %s: %v", cfg.Dir, err)
	}
	if clocks.calls != 2 {
		t.Errorf("the refused run restored the clocks %d times, want once", clocks.calls-1)
	}
}

// Ctrl-C mid-replay: the run stops, the manifest says incomplete, what was measured is kept,
// every file written is valid, the switches are safe (all Bar, the last command a halt) and the
// clocks restored.
func TestRunInterrupted(t *testing.T) {
	jobs := plan(t, 0, "tetris", "bvn")
	cfg, clocks := sessionConfig(t, jobs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Env.Progress = func(done, total int) {
		// Midway through the second replay, as a person pressing Ctrl-C would.
		if total == len(jobs[1].Schedule.Circuits) && done == total/2 {
			cancel()
		}
	}
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if clocks.calls != 1 {
		t.Errorf("clocks restored %d times, want once", clocks.calls)
	}
	var m Manifest
	readJSON(t, filepath.Join(cfg.Dir, "manifest.json"), &m)
	if m.Complete || m.Status != "interrupted" || !strings.Contains(m.Error, "context canceled") {
		t.Errorf("manifest: complete %v, status %q, error %q", m.Complete, m.Status, m.Error)
	}
	if m.Runs[0].Status != "complete" || m.Runs[1].Status != "interrupted" || m.Runs[1].Partial == "" {
		t.Errorf("runs: %+v", m.Runs)
	}
	var p Partial
	readJSON(t, filepath.Join(cfg.Dir, m.Runs[1].Partial), &p)
	if n := len(p.Live.Circuits); n < len(jobs[1].Schedule.Circuits)/2 || n >= len(jobs[1].Schedule.Circuits) {
		t.Errorf("partial record: %d of %d circuits measured", n, p.Of)
	}
	var s Summary
	readJSON(t, filepath.Join(cfg.Dir, "summary.json"), &s)
	if s.Complete || len(s.Runs) != 1 {
		t.Errorf("summary: complete %v, %d runs", s.Complete, len(s.Runs))
	}
	ents, err := os.ReadDir(cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			readJSON(t, filepath.Join(cfg.Dir, e.Name()), nil)
		}
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	log, err := switchctl.ReadChangeLog(filepath.Join(cfg.Dir, "switch-log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) == 0 || !log[len(log)-1].Halt {
		t.Errorf("the change log does not end in a halt (%d entries)", len(log))
	}
	sw := cfg.Env.Switches.(switchctl.Controller)
	states, err := sw.States(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.State != switchctl.Bar {
			t.Errorf("switch %s left %s", st.Switch, st.State)
		}
	}
}
