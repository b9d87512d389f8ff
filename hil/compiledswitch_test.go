package hil

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	switchfake "github.com/tetris-hil/tetris-hil/switchctl/fake"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

// A compiled replay across worker processes issues its switch commands from the host thread
// that watches the stamps: the fake controller receives exactly the commands' changes, in the
// order of issue, one Apply per command; each command ends no earlier than the controller took
// to settle it; the switches end in the schedule's last states; and the live timeline, which
// waits for the real commands, verifies (partial reconfiguration and barrier rounds).
func TestReplayCompiledSwitchesFakeController(t *testing.T) {
	const tr, tw = 100 * time.Microsecond, 300 * time.Microsecond
	dev := startProcessDevice(t, fourGPUs)
	for _, j := range plan(t, 0, "tetris", "bvn") {
		s := j.Schedule
		w := switchtest.Fabric{Ports: 8, Backend: "fake", TR: tr, TW: tw}.Wiring(t)
		log := &switchctl.ChangeLog{}
		ctl := switchfake.New(w, switchctl.Options{Log: log})
		live, err := ReplayCompiledSwitches(context.Background(), s, dev, SerialControllerModel(tr.Seconds(), tw.Seconds()), ctl)
		if err != nil {
			t.Fatalf("%s: %v", s.Algorithm, err)
		}
		var sent, logged []string
		applied := 0
		for _, c := range live.Commands {
			if len(c.Changes) == 0 {
				continue
			}
			applied++
			for _, ch := range c.Changes {
				sent = append(sent, fmt.Sprintf("%d:%s", applied, ch))
			}
			if c.End-c.Start < tw.Seconds() {
				t.Errorf("%s: command %d lasted %g s, less than the controller's settle time %v", s.Algorithm, c.ID, c.End-c.Start, tw)
			}
		}
		for _, e := range log.Entries(0) {
			logged = append(logged, fmt.Sprintf("%d:%s", e.Batch, switchctl.Change{Switch: e.Switch, State: e.State}))
		}
		if strings.Join(sent, " ") != strings.Join(logged, " ") || applied == 0 {
			t.Errorf("%s: the commands carried\n%v\nthe controller logged\n%v", s.Algorithm, sent, logged)
		}
		last := map[switchctl.Addr]switchctl.State{}
		for _, ch := range live.Timeline.SwitchChanges {
			last[switchctl.Addr{Stage: int(ch.Stage), Index: int(ch.Switch)}] = switchctl.State(ch.To)
		}
		states, err := ctl.States(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range states {
			if st.State != last[st.Switch] {
				t.Errorf("%s: switch %s is %s, the schedule left it %s", s.Algorithm, st.Switch, st.State, last[st.Switch])
			}
		}
		if vs := schedules.VerifyTimeline(s, live.Timeline); len(vs) > 0 {
			t.Errorf("%s: the live timeline violates %v", s.Algorithm, vs[0])
		}
		ctl.Close(context.Background())
	}
}

// failing is a controller whose second command fails; it records whether it was halted.
type failing struct {
	calls  int
	halted bool
}

func (f *failing) Apply(context.Context, []switchctl.Change) error {
	if f.calls++; f.calls == 2 {
		return errors.New("board did not answer")
	}
	return nil
}

func (f *failing) Halt(context.Context) error { f.halted = true; return nil }

// A command that fails stops the compiled replay with the controller's error, aborts the
// workers (which keep serving) and leaves the switches halted.
func TestReplayCompiledSwitchesFailure(t *testing.T) {
	dev := startProcessDevice(t, fourGPUs)
	s := plan(t, 0, "tetris")[0].Schedule
	f := &failing{}
	_, err := ReplayCompiledSwitches(context.Background(), s, dev, SerialControllerModel(1e-4, 3e-4), f)
	if err == nil || !strings.Contains(err.Error(), "board did not answer") || !f.halted {
		t.Fatalf("replay with a failing controller: %v (halted %v)", err, f.halted)
	}
	for _, g := range []int{0, 1, 2, 3} {
		if _, err := dev.ws.Worker(g).Check(context.Background()); err != nil {
			t.Errorf("worker for GPU %d after the failure: %v", g, err)
		}
	}
}

// With the board emulator on a pseudo-terminal as the controller (the serial backend end to
// end), a compiled replay across worker processes commands exactly the switch changes its
// timeline says, in the same batches and order, from the host thread that watches the stamps.
func TestReplayCompiledSwitchesBoard(t *testing.T) {
	w := switchtest.Fabric{Ports: 8, Backend: "serial", TR: time.Millisecond, TW: 2 * time.Millisecond,
		Header: "serial:\n  read_timeout: 100ms\n  reset_timeout: 2s\n"}.Wiring(t)
	var channels []int
	for _, s := range w.Switches {
		channels = append(channels, s.Channel)
	}
	dev := startProcessDevice(t, fourGPUs)
	for _, j := range plan(t, 0, "tetris", "bvn") {
		t.Run(j.Schedule.Algorithm, func(t *testing.T) {
			board := boardemu.New(boardemu.Config{Channels: channels, Settle: 2 * time.Millisecond}, nil)
			p, err := boardemu.StartPTY(context.Background(), board)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: &switchctl.ChangeLog{}, Port: p.Path})
			if err != nil {
				t.Fatal(err)
			}
			live, err := ReplayCompiledSwitches(context.Background(), j.Schedule, dev, SerialControllerModel(1e-3, 2e-3), c)
			if cerr := c.Close(context.Background()); cerr != nil {
				t.Error(cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if vs := schedules.VerifyTimeline(j.Schedule, live.Timeline); len(vs) > 0 {
				t.Fatalf("live timeline: %v", vs[0])
			}
			got, want := boardBatches(t, board.Log().Entries(), w), timelineBatches(live.Timeline)
			if len(want) == 0 || !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("the board received %d batches, the timeline has %d:\n%v\n%v", len(got), len(want), got, want)
			}
		})
	}
}
