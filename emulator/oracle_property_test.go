package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// genDemand draws a demand of 2 to 9 ports (sizes that are not powers of two get padded), each
// entry empty with probability about one third.
func genDemand(t *rapid.T) *schedules.Demand {
	n := rapid.IntRange(2, 9).Draw(t, "ports")
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if rapid.IntRange(0, 2).Draw(t, "empty") > 0 {
				d.Bytes[i][j] = rapid.Int64Range(1, 8<<20).Draw(t, "bytes")
			}
		}
	}
	return d
}

// sameRun fails t unless the walker-based Run and the oracle give the same result and timeline,
// field for field and byte for byte in JSON.
func sameRun(t *rapid.T, s *schedules.Schedule, d *schedules.Demand, cfg Config) {
	res, tl, err := Run(context.Background(), s, d, cfg)
	wantRes, wantTl, wantErr := oracleRun(context.Background(), s, d, cfg)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("walker error %v, oracle error %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(res, wantRes) {
		t.Fatalf("results differ:\nwalker %+v\noracle %+v", res, wantRes)
	}
	if !reflect.DeepEqual(tl, wantTl) {
		t.Fatalf("timelines differ:\nwalker %+v\noracle %+v", tl, wantTl)
	}
	a, _ := json.Marshal([]any{res, tl})
	b, _ := json.Marshal([]any{wantRes, wantTl})
	if !bytes.Equal(a, b) {
		t.Fatalf("JSON differs:\nwalker %s\noracle %s", a, b)
	}
}

// Every registered scheduler on random demands, on both fabrics, in partial and barrier mode (the
// barrier baselines, and Tetris with --no-partial), under both reconfiguration models: the
// emulator rewritten on the Walker gives exactly what the engine it replaced gave.
func TestPropertyWalkerMatchesOracleOnSchedulers(t *testing.T) {
	names := schedules.Names()
	if len(names) < 8 {
		t.Fatalf("only %d schedulers registered: %v", len(names), names)
	}
	rapid.Check(t, func(t *rapid.T) {
		d := genDemand(t)
		name := rapid.SampledFrom(names).Draw(t, "algorithm")
		alpha := rapid.SampledFrom([]float64{0, 1e-8, 1e-6, 1e-5, 1e-3}).Draw(t, "alpha")
		o := schedules.Options{Bandwidth: 1e11, Reconfig: alpha,
			Fabric:    rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric"),
			NoPartial: name == "tetris" && rapid.Bool().Draw(t, "no-partial")}
		sch, _ := schedules.Lookup(name)
		s, err := sch.Schedule(context.Background(), d, o)
		if err != nil {
			t.Fatal(err)
		}
		rc := ParallelReconfig(alpha)
		if rapid.Bool().Draw(t, "controller") {
			rc = ControllerReconfig(alpha/rapid.Float64Range(1, 20).Draw(t, "tr-part"), alpha)
		}
		sameRun(t, s, d, Config{Transfer: BandwidthModel(1e11), Reconfig: rc})
	})
}

// The same on random schedules (not only what schedulers produce): any valid schedule, either
// mode, either fabric, with zero-length circuits and simultaneous completions.
func TestPropertyWalkerMatchesOracleOnRandomSchedules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		s := genSchedule(t, mode)
		if rapid.Bool().Draw(t, "zero-lengths") {
			for i := range s.Circuits {
				if i%3 == 0 {
					s.Circuits[i].Bytes = 0
				}
			}
		}
		alpha := rapid.SampledFrom([]float64{0, 1e-9, 1e-6}).Draw(t, "alpha")
		rc := ParallelReconfig(alpha)
		if rapid.Bool().Draw(t, "controller") {
			rc = ControllerReconfig(alpha/3, alpha)
		}
		sameRun(t, s, nil, Config{Transfer: BandwidthModel(1e11), Reconfig: rc})
	})
}

// liveDrive drives w the way a real-time runner does: it handles one report at a time, in order
// of time, and flushes the walker's command right after each (a barrier round due later is a
// timer). It returns false when two things finished at the same instant, where a real-time
// runner, seeing them one after the other, may group commands differently from the emulator.
func liveDrive(t *rapid.T, w *Walker, dur []float64, rc Reconfigurer) bool {
	type job struct {
		end, start float64
		circuit    int // −1: a command; −2: a timer for the next barrier round
		cmd        int
	}
	var busy []job
	transmit := func(ready []int32, now float64) {
		for _, c := range ready {
			busy = append(busy, job{end: now + dur[c], circuit: int(c)})
		}
	}
	flush := func(now float64) {
		at, ok := w.Pending()
		if !ok {
			return
		}
		if at > now {
			busy = append(busy, job{end: at, circuit: -2})
			return
		}
		cmd, _ := w.Flush()
		start, end := cmd.Requested, cmd.Requested
		if len(cmd.Epochs) > 0 {
			start, end = rc.Command(cmd.Requested, len(cmd.Epochs))
		}
		busy = append(busy, job{end: end, start: start, circuit: -1, cmd: cmd.ID})
	}
	ready, err := w.Start()
	if err != nil {
		t.Fatal(err)
	}
	transmit(ready, 0)
	flush(0)
	for len(busy) > 0 {
		k := 0
		for i := range busy {
			if busy[i].end < busy[k].end {
				k = i
			}
		}
		for i := range busy {
			if i != k && busy[i].end == busy[k].end {
				return false
			}
		}
		j := busy[k]
		busy = append(busy[:k], busy[k+1:]...)
		switch j.circuit {
		case -2:
			ready = nil
		case -1:
			ready, err = w.Settled(j.cmd, j.start, j.end)
		default:
			ready, err = w.Completed(j.circuit, j.end)
		}
		if err != nil {
			t.Fatal(err)
		}
		transmit(ready, j.end)
		flush(j.end)
	}
	if !w.Done() {
		t.Fatal("the live-style walk ended before the walker was done")
	}
	return true
}

// A real-time loop over the same Walker reproduces the emulator exactly, as long as nothing
// finishes at the same instant as anything else (with real clocks, nothing does): the rules are
// the walker's, so the two loops differ only in how they wait.
// liveTies and liveRuns count the draws of TestPropertyLiveStyleDriverMatchesRun.
var liveTies, liveRuns int

func TestPropertyLiveStyleDriverMatchesRun(t *testing.T) {
	liveTies, liveRuns = 0, 0
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		s := genSchedule(t, mode)
		liveRuns++
		// Distinct, irregular sizes, so that completions do not tie.
		for i := range s.Circuits {
			s.Circuits[i].Bytes = 1 + int64(i)*7919 + rapid.Int64Range(0, 7000).Draw(t, "bytes")
		}
		cfg := Config{Transfer: BandwidthModel(1.2345e11), Reconfig: ParallelReconfig(rapid.Float64Range(1e-7, 1e-4).Draw(t, "alpha"))}
		if rapid.Bool().Draw(t, "controller") {
			cfg.Reconfig = ControllerReconfig(rapid.Float64Range(1e-8, 1e-6).Draw(t, "tr"), rapid.Float64Range(1e-7, 1e-5).Draw(t, "tw"))
		}
		res, tl, err := Run(context.Background(), s, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		o, err := NewOrder(s)
		if err != nil {
			t.Fatal(err)
		}
		dur := make([]float64, len(s.Circuits))
		for i, c := range s.Circuits {
			dur[i], _ = cfg.Transfer.Seconds(c.Src, c.Dst, c.Bytes)
		}
		w := NewWalker(o)
		if !liveDrive(t, w, dur, cfg.Reconfig.NewReconfigurer()) {
			liveTies++
			return // a tie: the emulator's grouping of simultaneous requests is not a real-time one
		}
		liveTl, err := w.Timeline()
		if err != nil {
			t.Fatal(err)
		}
		liveRes := Summarize(s, nil, liveTl, cfg, w.Counts())
		if !reflect.DeepEqual(liveTl, tl) || !reflect.DeepEqual(liveRes, res) {
			t.Fatalf("live-style loop and Run disagree:\nlive %+v\nrun  %+v", liveRes, res)
		}
	})
	// The comparison must mostly happen: ties are the exception.
	t.Logf("%d of %d draws compared (the rest had simultaneous events)", liveRuns-liveTies, liveRuns)
	if liveTies*4 > liveRuns {
		t.Errorf("%d of %d draws had simultaneous events and were not compared", liveTies, liveRuns)
	}
}
