package emulator_test

import (
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// twoByTwo: 0→1 and 1→0 in Cross, then 0→0 in Bar (as in ExampleNewOrder).
func twoByTwo(mode schedules.Mode) *schedules.Schedule {
	f, _ := benes.New(2)
	return &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "test", N: 2, Ports: 2, Fabric: schedules.Benes, Mode: mode,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 1, Path: f.NewPath(1, 0, 0)},
			{Src: 0, Dst: 0, Bytes: 1, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
}

func newWalker(t *testing.T, s *schedules.Schedule) *emulator.Walker {
	t.Helper()
	o, err := emulator.NewOrder(s)
	if err != nil {
		t.Fatal(err)
	}
	return emulator.NewWalker(o)
}

// A driver that reports out of turn gets an error naming what it got wrong, not a corrupted walk.
func TestWalkerRejectsBadReports(t *testing.T) {
	w := newWalker(t, twoByTwo(schedules.Partial))
	if _, err := w.Completed(0, 1); err == nil || !strings.Contains(err.Error(), "circuit 0 completed, but it is not transmitting") {
		t.Errorf("completion before Start: %v", err)
	}
	ready, err := w.Start()
	if err != nil || len(ready) != 0 {
		t.Fatalf("Start: %v, ready %v; every circuit waits for the switch", err, ready)
	}
	if _, err := w.Start(); err == nil {
		t.Error("second Start accepted")
	}
	if _, err := w.Settled(0, 0, 1); err == nil || !strings.Contains(err.Error(), "command 0") {
		t.Errorf("settling a command never sent: %v", err)
	}
	cmd, ok := w.Flush()
	if !ok || cmd.ID != 0 || len(cmd.Epochs) != 1 || cmd.Requested != 0 {
		t.Fatalf("Flush = %+v, %v; want command 0 with the one change to Cross, requested at 0", cmd, ok)
	}
	if _, ok := w.Flush(); ok {
		t.Error("a second Flush with nothing requested returned a command")
	}
	if err := w.Started(2, 1); err == nil {
		t.Error("circuit 2 started before it was ready")
	}
	ready, err = w.Settled(0, 0, 1)
	if err != nil || len(ready) != 2 {
		t.Fatalf("Settled: %v, ready %v; want circuits 0 and 1", err, ready)
	}
	if _, err := w.Settled(0, 0, 1); err == nil {
		t.Error("command 0 settled twice")
	}
	if _, err := w.Timeline(); err == nil || !strings.Contains(err.Error(), "has not completed") {
		t.Errorf("Timeline before the end: %v", err)
	}
	if err := w.Started(1, 1.5); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Completed(0, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Completed(0, 2); err == nil {
		t.Error("circuit 0 completed twice")
	}
	if _, err := w.Completed(1, 2.5); err != nil {
		t.Fatal(err)
	}
	if at, ok := w.Pending(); !ok || at != 2.5 {
		t.Errorf("Pending = %g, %v; want the change back to Bar requested at 2.5", at, ok)
	}
	cmd, _ = w.Flush()
	ready, _ = w.Settled(cmd.ID, 2.5, 3)
	if len(ready) != 1 || ready[0] != 2 {
		t.Fatalf("ready %v, want circuit 2", ready)
	}
	if _, err := w.Completed(2, 4); err != nil || !w.Done() {
		t.Fatalf("last completion: %v, done %v", err, w.Done())
	}
	tl, err := w.Timeline()
	if err != nil {
		t.Fatal(err)
	}
	// The measured start of circuit 1 (1.5) is kept; circuit 0 started when it became ready.
	if c := tl.Circuits[1]; c.TransmitStart != 1.5 || c.End != 2.5 || tl.Circuits[0].TransmitStart != 1 {
		t.Errorf("timeline %+v", tl.Circuits)
	}
	if c := w.Counts(); c.StateChanges != 2 || c.ReconfigEvents != 2 || c.Events != 5 {
		t.Errorf("counts %+v, want 2 changes in 2 commands, 3 completions + 2 changes = 5 events", c)
	}
}

// In barrier mode a round lasts at least its planned duration: the next round's command is due
// at the end of the round's transmission phase plus that duration, however early its circuits end.
func TestWalkerBarrierRoundWaitsPlannedDuration(t *testing.T) {
	s := twoByTwo(schedules.Barrier)
	s.Rounds = []schedules.Round{{Group: 0, PlannedDuration: 10}}
	w := newWalker(t, s)
	if _, err := w.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, ok := w.Flush()
	if !ok || len(cmd.Epochs) != 1 {
		t.Fatalf("round 0: %+v, %v", cmd, ok)
	}
	ready, _ := w.Settled(cmd.ID, 0, 1)
	if len(ready) != 2 {
		t.Fatalf("round 0 ready %v", ready)
	}
	_, _ = w.Completed(0, 2)
	if _, ok := w.Pending(); ok {
		t.Error("round 1 due while round 0 still transmits")
	}
	_, _ = w.Completed(1, 3)
	if at, ok := w.Pending(); !ok || at != 11 {
		t.Errorf("round 1 due at %g (%v), want 1 + 10", at, ok)
	}
}

// Barrier mode keeps per circuit only its end; a driver's reports are still checked against the
// round under way, and a start it reports (Started) is still what the timeline shows. The same
// walk with the groups out of schedule order (rounds found by sorting) must agree.
func TestWalkerBarrierReports(t *testing.T) {
	sorted := twoByTwo(schedules.Barrier)
	unsorted := twoByTwo(schedules.Barrier)
	unsorted.Circuits = []schedules.Circuit{sorted.Circuits[2], sorted.Circuits[0], sorted.Circuits[1]}
	for _, tc := range []struct {
		name     string
		s        *schedules.Schedule
		a, b, c2 int // round 0's circuits, round 1's
	}{{"groups in order", sorted, 0, 1, 2}, {"groups out of order", unsorted, 1, 2, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWalker(t, tc.s)
			if _, err := w.Completed(tc.a, 1); err == nil {
				t.Error("completion before Start accepted")
			}
			if _, err := w.Start(); err != nil {
				t.Fatal(err)
			}
			cmd, ok := w.Flush()
			if !ok || len(cmd.Epochs) != 1 || cmd.Epochs[0] != 0 {
				t.Fatalf("round 0: %+v, %v; want the one change to Cross", cmd, ok)
			}
			if err := w.Started(tc.a, 0.5); err == nil {
				t.Error("a circuit started before its round's change settled")
			}
			ready, err := w.Settled(cmd.ID, 0, 1)
			if err != nil || len(ready) != 2 {
				t.Fatalf("Settled: %v, ready %v", err, ready)
			}
			if err := w.Started(tc.c2, 1); err == nil {
				t.Error("a round-1 circuit started during round 0")
			}
			if _, err := w.Completed(tc.c2, 1); err == nil {
				t.Error("a round-1 circuit completed during round 0")
			}
			if err := w.Started(tc.b, 1.5); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Completed(tc.a, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Completed(tc.a, 2); err == nil {
				t.Error("circuit completed twice")
			}
			if _, err := w.Timeline(); err == nil || !strings.Contains(err.Error(), "has not completed") {
				t.Errorf("Timeline before the end: %v", err)
			}
			if _, err := w.Completed(tc.b, 2.5); err != nil {
				t.Fatal(err)
			}
			cmd, ok = w.Flush()
			if !ok || cmd.Requested != 2.5 || len(cmd.Epochs) != 1 || cmd.Epochs[0] != 1 {
				t.Fatalf("round 1: %+v, %v; want the change back to Bar at 2.5", cmd, ok)
			}
			if ready, _ := w.Settled(cmd.ID, 2.5, 3); len(ready) != 1 || int(ready[0]) != tc.c2 {
				t.Fatalf("round 1 ready %v, want circuit %d", ready, tc.c2)
			}
			if _, err := w.Completed(tc.c2, 4); err != nil || !w.Done() {
				t.Fatalf("last completion: %v, done %v", err, w.Done())
			}
			tl, err := w.Timeline()
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]schedules.CircuitTiming{
				tc.a:  {Circuit: tc.a, Ready: 0, PathReady: 0, ReconfigStart: 0, TransmitStart: 1, End: 2},
				tc.b:  {Circuit: tc.b, Ready: 0, PathReady: 0, ReconfigStart: 0, TransmitStart: 1.5, End: 2.5},
				tc.c2: {Circuit: tc.c2, Ready: 2.5, PathReady: 2.5, ReconfigStart: 2.5, TransmitStart: 3, End: 4},
			}
			for c, ct := range tl.Circuits {
				if ct != want[c] {
					t.Errorf("circuit %d: %+v, want %+v", c, ct, want[c])
				}
			}
			if len(tl.SwitchChanges) != 2 || tl.SwitchChanges[1].Start != 2.5 || tl.SwitchChanges[1].To != benes.Bar {
				t.Errorf("switch changes %+v", tl.SwitchChanges)
			}
		})
	}
}
