package hil

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/hil/delay"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"

	_ "github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

// boardBatches reads the board emulator's command log back into batches: the changes of the SW
// lines up to each *OPC? (the serial backend's end of one Apply), as "stage:index=state",
// sorted within a batch.
func boardBatches(t *testing.T, log []boardemu.LogEntry, w *switchctl.Wiring) [][]string {
	t.Helper()
	addr := map[int]switchctl.Addr{}
	for _, s := range w.Switches {
		addr[s.Channel] = s.Switch
	}
	var out [][]string
	var cur []string
	for _, e := range log {
		if e.Fault != "" {
			t.Fatalf("board log entry %d: fault %s", e.Seq, e.Fault)
		}
		head, args, _ := strings.Cut(e.Cmd, " ")
		switch head {
		case "SW":
			for _, item := range strings.Split(args, ",") {
				f := strings.Fields(item)
				ch, err := strconv.Atoi(f[0])
				if err != nil || len(f) != 2 {
					t.Fatalf("board log entry %d: %q", e.Seq, e.Cmd)
				}
				cur = append(cur, fmt.Sprintf("%s=%s", addr[ch], strings.ToLower(f[1])))
			}
		case "*OPC?":
			if len(cur) > 0 {
				sort.Strings(cur)
				out = append(out, cur)
				cur = nil
			}
		}
	}
	if len(cur) > 0 {
		t.Fatalf("SW lines after the last *OPC?: %v", cur)
	}
	return out
}

// timelineBatches groups a timeline's switch changes into the commands they came in (one start
// and end per command), in order of start.
func timelineBatches(tl *schedules.Timeline) [][]string {
	type batch struct {
		start, end float64
		changes    []string
	}
	var bs []*batch
	idx := map[[2]float64]*batch{}
	for _, ch := range tl.SwitchChanges {
		k := [2]float64{ch.Start, ch.End}
		b := idx[k]
		if b == nil {
			b = &batch{start: ch.Start, end: ch.End}
			idx[k] = b
			bs = append(bs, b)
		}
		b.changes = append(b.changes, fmt.Sprintf("%d:%d=%s", ch.Stage, ch.Switch, ch.To))
	}
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].start < bs[j].start })
	out := make([][]string, len(bs))
	for i, b := range bs {
		sort.Strings(b.changes)
		out[i] = b.changes
	}
	return out
}

// With the board emulator on a pseudo-terminal as the controller (the real serial backend end to
// end), a replay commands exactly the switch changes its timeline says, in the same batches and
// in the same order.
func TestReplayCommandsBoard(t *testing.T) {
	w := switchtest.Fabric{Ports: 8, Backend: "serial", TR: time.Millisecond, TW: 2 * time.Millisecond,
		Header: "serial:\n  read_timeout: 100ms\n  reset_timeout: 2s\n"}.Wiring(t)
	var channels []int
	for _, s := range w.Switches {
		channels = append(channels, s.Channel)
	}
	jobs := plan(t, 0, "tetris", "bvn")
	ws := openEngines(t, identity(8), testModel, schedulesOf(jobs)...)
	for _, j := range jobs {
		t.Run(j.Schedule.Algorithm, func(t *testing.T) {
			board := boardemu.New(boardemu.Config{Channels: channels, Settle: 2 * time.Millisecond}, nil)
			p, err := boardemu.StartPTY(context.Background(), board)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			log := &switchctl.ChangeLog{}
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log, Port: p.Path})
			if err != nil {
				t.Fatal(err)
			}
			live, err := Replay(context.Background(), j.Schedule, Env{Transfers: ws, Switches: c, SwitchLog: log,
				Injector: delay.Injector{SleepThreshold: time.Millisecond}})
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
			if len(want) == 0 {
				t.Fatal("the timeline changes no switch")
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("the board received %d batches, the timeline has %d", len(got), len(want))
				for i := range max(len(got), len(want)) {
					var g, wa []string
					if i < len(got) {
						g = got[i]
					}
					if i < len(want) {
						wa = want[i]
					}
					if !slices.Equal(g, wa) {
						t.Errorf("batch %d: board %v, timeline %v", i, g, wa)
					}
				}
			}
			n := 0
			for _, b := range want {
				n += len(b)
			}
			t.Logf("%d switch changes in %d batches, board and timeline agree", n, len(want))
			// The close put the board safe.
			for _, ch := range channels {
				if s := board.State(ch); s != "BAR" {
					t.Errorf("channel %d left %s", ch, s)
				}
			}
		})
	}
}
