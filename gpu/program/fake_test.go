package program

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// perByte is a copy model of 1 ns per byte plus 1 µs.
func perByte(_, _ int, bytes int64) (float64, error) { return 1e-6 + float64(bytes)*1e-9, nil }

// parallel is the paper's reconfiguration model: every command lasts alpha from its request.
type parallel float64

func (a parallel) Command(t float64, _ int) (float64, float64) { return t, t + float64(a) }

// serial serves one command at a time, each taking tr per change.
type serial struct{ tr, free float64 }

func (s *serial) Command(t float64, k int) (float64, float64) {
	start := max(t, s.free)
	s.free = start + float64(k)*s.tr
	return start, s.free
}

// twoEndpoints: endpoint 0 copies circuit 0 (1000 B) then circuit 2, which waits for circuit 0
// and for signal 0 (requested when circuit 1 ends); endpoint 1 copies circuit 1 (3000 B).
func twoEndpoints(batch bool) *Program {
	return &Program{Circuits: 3, Batch: batch,
		Endpoints: [][]Step{
			{{Circuit: 0, Dst: 1, Bytes: 1000}, {Circuit: 2, Dst: 1, Bytes: 500, After: []int32{0}, Signals: []int32{0}}},
			{{Circuit: 1, Dst: 0, Bytes: 3000}},
		},
		Signals: []Signal{{Requires: []int32{1}, After: -1, Changes: 2}},
	}
}

// In virtual time the stamps are the programs' semantics, worked by hand: circuit 0 runs
// 0..2 µs, circuit 1 0..4 µs; signal 0 is requested at 4 µs and its command lasts 5 µs, so
// circuit 2 starts at 9 µs (not at 2 µs, when its predecessor ended) and ends at 10.5 µs.
func TestFakeVirtualStamps(t *testing.T) {
	st, err := Fake{Virtual: true, Duration: perByte}.Execute(context.Background(), twoEndpoints(true), parallel(5e-6))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ start, end, target float64 }{{0, 2e-6, 0}, {0, 4e-6, 0}, {9e-6, 10.5e-6, 9e-6}}
	for c, w := range want {
		if !near(st.Start[c], w.start) || !near(st.End[c], w.end) || !near(st.Target[c], w.target) {
			t.Errorf("circuit %d: %g..%g (target %g), want %g..%g (target %g)", c, st.Start[c], st.End[c], st.Target[c], w.start, w.end, w.target)
		}
	}
	if len(st.Commands) != 1 || !near(st.Commands[0].Requested, 4e-6) || !near(st.Commands[0].End, 9e-6) || st.CommandOf[0] != 0 {
		t.Errorf("commands %+v", st.Commands)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-15 }

// Signals requested at one instant are one command with Batch (the station sees their changes
// together), and one command each without, in order; a barrier-style Gap holds a signal back
// until its predecessor's command has ended and the gap passed.
func TestFakeStationCommands(t *testing.T) {
	p := &Program{Circuits: 2, Batch: true,
		Endpoints: [][]Step{{{Circuit: 0, Dst: 1, Bytes: 1000}}, {{Circuit: 1, Dst: 0, Bytes: 1000}}},
		Signals:   []Signal{{Requires: []int32{0, 1}, After: -1, Changes: 1}, {Requires: []int32{1}, After: -1, Changes: 1}},
	}
	st, err := Fake{Virtual: true, Duration: perByte}.Execute(context.Background(), p, &serial{tr: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Commands) != 1 || len(st.Commands[0].Signals) != 2 || !near(st.Commands[0].End, 4e-6) {
		t.Errorf("batch: commands %+v, want one of both signals, 2..4 µs", st.Commands)
	}
	p.Batch = false
	p.Signals = []Signal{{After: -1, Changes: 1}, {Requires: []int32{0, 1}, After: 0, Gap: 10e-6, Changes: 3}}
	p.Endpoints[1][0].Signals = []int32{0}
	st, err = Fake{Virtual: true, Duration: perByte}.Execute(context.Background(), p, &serial{tr: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	// Signal 0 at 0 (0..1 µs); circuit 1 runs 1..3 µs; signal 1 waits for 1 µs + 10 µs.
	if len(st.Commands) != 2 || !near(st.Start[1], 1e-6) || !near(st.Commands[1].Requested, 11e-6) || !near(st.Commands[1].End, 14e-6) {
		t.Errorf("in order: starts %v, commands %+v", st.Start, st.Commands)
	}
}

// In real time every copy starts at or after its waits end and lasts exactly its duration, and
// every program's order and waits are kept.
func TestFakeRealTime(t *testing.T) {
	p := twoEndpoints(true)
	st, err := Fake{Duration: perByte, Sleep: time.Millisecond}.Execute(context.Background(), p, parallel(5e-6))
	if err != nil {
		t.Fatal(err)
	}
	for c := range p.Circuits {
		if st.Start[c] < st.Target[c] {
			t.Errorf("circuit %d started at %g, before its waits ended at %g", c, st.Start[c], st.Target[c])
		}
	}
	if d := st.End[0] - st.Start[0]; math.Abs(d-2e-6) > 1e-12 {
		t.Errorf("circuit 0 lasted %g s, want 2 µs", d)
	}
	if st.Target[2] < st.End[0] || st.Target[2] < st.Commands[0].End || st.Commands[0].Requested < st.End[1] {
		t.Errorf("circuit 2's target %g, circuit 0 ended %g, command %+v, circuit 1 ended %g", st.Target[2], st.End[0], st.Commands[0], st.End[1])
	}
}

// A program that waits on what never comes is reported, not spun on forever; a cancelled
// context stops a real-time run.
func TestFakeDeadlockAndCancel(t *testing.T) {
	p := &Program{Circuits: 2, Endpoints: [][]Step{{{Circuit: 0, Dst: 0, After: []int32{1}}}, {{Circuit: 1, Dst: 0, After: []int32{0}}}}}
	for _, virtual := range []bool{true, false} {
		if _, err := (Fake{Virtual: virtual, Duration: perByte}).Execute(context.Background(), p, nil); err == nil || !strings.Contains(err.Error(), "deadlock") {
			t.Errorf("virtual %v: %v, want a deadlock", virtual, err)
		}
	}
	long := &Program{Circuits: 1, Endpoints: [][]Step{{{Circuit: 0, Dst: 0, Bytes: 1 << 40}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := (Fake{Duration: perByte}).Execute(ctx, long, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a cancelled run: %v", err)
	}
}

// Validate names what is wrong; a bad station timing is an error, not a timeline.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Program
		want string
	}{
		{"twice", Program{Circuits: 1, Endpoints: [][]Step{{{Circuit: 0}, {Circuit: 0}}}}, "appears twice"},
		{"missing", Program{Circuits: 2, Endpoints: [][]Step{{{Circuit: 0}}}}, "2 circuits, but"},
		{"dst", Program{Circuits: 1, Endpoints: [][]Step{{{Circuit: 0, Dst: 3}}}}, "to endpoint 3"},
		{"after", Program{Circuits: 1, Endpoints: [][]Step{{{Circuit: 0, After: []int32{5}}}}}, "after circuit 5"},
		{"signal", Program{Circuits: 1, Endpoints: [][]Step{{{Circuit: 0, Signals: []int32{0}}}}}, "signal 0 is out of range"},
		{"later", Program{Circuits: 0, Signals: []Signal{{After: 0}}}, "must be an earlier one"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	bad := stationFunc(func(t float64, _ int) (float64, float64) { return t - 1, t })
	if _, err := (Fake{Virtual: true, Duration: perByte}).Execute(context.Background(), twoEndpoints(true), bad); err == nil || !strings.Contains(err.Error(), "must start at or after") {
		t.Errorf("a station starting before the request: %v", err)
	}
}

type stationFunc func(float64, int) (float64, float64)

func (f stationFunc) Command(t float64, k int) (float64, float64) { return f(t, k) }

// The station groups signals requested at one instant into one command, and no others: a
// signal seen late, beside one requested later, is not held for it (its change would last longer
// than the model says).
func TestTrackerGroupsByInstant(t *testing.T) {
	p := &Program{Circuits: 3, Batch: true,
		Endpoints: [][]Step{{{Circuit: 0}, {Circuit: 1, After: []int32{0}}, {Circuit: 2, After: []int32{1}}}},
		Signals: []Signal{{Requires: []int32{0}, After: -1, Changes: 1}, {Requires: []int32{1}, After: -1, Changes: 1},
			{Requires: []int32{2}, After: -1, Changes: 1}},
	}
	tr := NewTracker(p, parallel(5e-6))
	tr.Ended(0, 1e-6)
	tr.Ended(1, 2e-6)
	tr.Ended(2, 2e-6)
	n, err := tr.IssueDue()
	if err != nil {
		t.Fatal(err)
	}
	cmds := tr.Commands()
	if n != 2 || len(cmds) != 2 || len(cmds[0].Signals) != 1 || !near(cmds[0].End, 6e-6) || len(cmds[1].Signals) != 2 || !near(cmds[1].End, 7e-6) {
		t.Errorf("%d commands: %+v; want signal 0 alone ending at 6 µs, then signals 1 and 2 ending at 7 µs", n, cmds)
	}
	if !tr.Done() {
		t.Error("every signal was issued, but the tracker is not done")
	}
}

// SetEnd moves a command's end (never before its start) and the ends its signals report.
func TestTrackerSetEnd(t *testing.T) {
	p := twoEndpoints(true)
	tr := NewTracker(p, parallel(5e-6))
	tr.Ended(1, 4e-6)
	if n, err := tr.IssueDue(); n != 1 || err != nil {
		t.Fatalf("IssueDue: %d, %v", n, err)
	}
	tr.SetEnd(0, 20e-6)
	if end, ok := tr.SignalEnd(0); !ok || end != 20e-6 || tr.Commands()[0].End != 20e-6 {
		t.Errorf("after SetEnd(20 µs): signal end %g, command %+v", end, tr.Commands()[0])
	}
	tr.SetEnd(0, 0)
	if end, _ := tr.SignalEnd(0); end != 4e-6 {
		t.Errorf("SetEnd before the start: signal end %g, want the start 4 µs", end)
	}
}

// A stall injected into the real-time fake device's clock (a jump of 3 ms, what a preempted
// thread sees) while it spins through a 5 ms copy is counted in Stamps.Stalls, once, at its
// size; in virtual time there is no clock to stall.
func TestFakeStalls(t *testing.T) {
	p := &Program{Circuits: 1, Endpoints: [][]Step{{{Circuit: 0, Dst: 0, Bytes: 1}}}}
	copy5ms := func(_, _ int, _ int64) (float64, error) { return 5e-3, nil }
	// A clock of its own, 100 ns a read, so that no stall but the injected one is seen.
	reads := 0
	clock := func() float64 {
		reads++
		now := float64(reads) * 100e-9
		if reads > 50 {
			now += 3e-3
		}
		return now
	}
	st, err := Fake{Duration: copy5ms, StallThreshold: time.Millisecond, now: clock}.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Stalls
	if s == nil || s.Count != 1 || s.WorstSeconds < 3e-3 || s.WorstSeconds > 3.001e-3 || s.TotalSeconds != s.WorstSeconds || s.ThresholdSeconds != 1e-3 {
		t.Errorf("stalls %+v, want the one injected stall of 3 ms", s)
	}
	st, err = Fake{Virtual: true, Duration: copy5ms}.Execute(context.Background(), p, nil)
	if err != nil || st.Stalls != nil {
		t.Errorf("virtual time: stalls %+v, %v; want none recorded", st.Stalls, err)
	}
}
