package hil_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/hil"
	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/fake"
	"github.com/tetris-hil/tetris-hil/switchctl/serialboard"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

// The conformance of the one controller model: for the same command sequence, the fake
// controller, the board emulator (behind the real serial client, and on its own) and the
// emulator's Controller model (and a replay's prediction, hil.ControllerModel) charge the same
// times. The fakes run in real time, so each comparison allows conformTol, less than half a
// T_r: a wrong B or settle rule is off by at least a request. The fakes' sleeps are stretched by
// a loaded machine, never shortened, so each comparison gets five tries and the first within
// bounds counts. Times are in units u = 2.5ms: T_r = 3u, T_w = 9u.
const (
	u          = 2500 * time.Microsecond
	conformTR  = 3 * u
	conformTW  = 9 * u
	conformB   = 4
	conformTol = 3 * time.Millisecond
)

// span is one command as it happened or as a model times it, from the start of the test.
type span struct{ arrive, start, end time.Duration }

func secs(d time.Duration) float64 { return d.Seconds() }
func dur(s float64) time.Duration  { return time.Duration(s * 1e9) }

// predict times the commands (k changes each, arriving as recorded, in order of arrival) with a
// reconfiguration model of the emulator.
func predict(m emulator.ReconfigModel, ks []int, got []span) []span {
	rc := m.NewReconfigurer()
	order := make([]int, len(ks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return got[order[a]].arrive < got[order[b]].arrive })
	out := make([]span, len(ks))
	for _, i := range order {
		s, e := rc.Command(secs(got[i].arrive), ks[i])
		out[i] = span{got[i].arrive, dur(s), dur(e)}
	}
	return out
}

func within(got, want []span) error { return withinTol(got, want, conformTol) }

func withinTol(got, want []span, tol time.Duration) error {
	for i := range want {
		if d := got[i].start - want[i].start; d < -tol || d > tol {
			return fmt.Errorf("command %d (arrived %v) started at %v, the model says %v", i, got[i].arrive, got[i].start, want[i].start)
		}
		if d := got[i].end - want[i].end; d < -tol || d > tol {
			return fmt.Errorf("command %d (arrived %v) settled at %v, the model says %v", i, got[i].arrive, got[i].end, want[i].end)
		}
	}
	return nil
}

func tries(t *testing.T, name string, run func() error) {
	t.Helper()
	var err error
	for try := 1; try <= 5; try++ {
		if err = run(); err == nil {
			return
		}
		t.Logf("%s, try %d: %v", name, try, err)
	}
	t.Errorf("%s: %v", name, err)
}

// changesFor is command i of k changes: the switches from index i on (so that each command's
// first switch names it), each toggled from what the earlier commands left.
func changesFor(w *switchctl.Wiring, cur map[switchctl.Addr]switchctl.State, i, k int) []switchctl.Change {
	out := make([]switchctl.Change, k)
	for j := range out {
		a := w.Switches[(i+j)%len(w.Switches)].Switch
		cur[a] = 1 - cur[a]
		out[j] = switchctl.Change{Switch: a, State: cur[a]}
	}
	return out
}

// spans reads each command's first change commanded and last change settled from the log; a
// command is the batch whose first entry is its first switch.
func spans(w *switchctl.Wiring, log *switchctl.ChangeLog, t0 time.Time, arrive []time.Duration) []span {
	first := map[int]int{} // batch → command
	out := make([]span, len(arrive))
	for i := range out {
		out[i].arrive = arrive[i]
	}
	for _, e := range log.Entries(0) {
		if e.Halt {
			continue
		}
		i, ok := first[e.Batch]
		if !ok {
			for j := range arrive {
				if w.Switches[j%len(w.Switches)].Switch == e.Switch {
					i = j
				}
			}
			first[e.Batch] = i
			out[i].start = e.Commanded.Sub(t0)
		}
		out[i].end = max(out[i].end, e.Settled.Sub(t0))
	}
	return out
}

var conformKs = []int{1, 3, 5, 16, 17, 2, 20}

// TestConformanceAsReplayed issues the commands one after another as a replay does (each Apply
// when the last has returned, after a pause) to the fake and to the serial board on the board
// emulator, both with T_r, T_w and B = 4, and compares what their change logs say with the
// emulator's controller model with serial settles, and with the replay's prediction built from
// the wiring map.
func TestConformanceAsReplayed(t *testing.T) {
	ctx := context.Background()
	header := fmt.Sprintf("batch: %d\n", conformB)
	model := emulator.Controller(ctlmodel.Model{TR: conformTR.Seconds(), TW: conformTW.Seconds(), Batch: conformB, SerialSettle: true})
	open := map[string]func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring){
		"fake": func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := switchtest.Fabric{Ports: 8, Backend: "fake", TR: conformTR, TW: conformTW, Header: header}.Wiring(t)
			return fake.New(w, switchctl.Options{Log: log}), w
		},
		"serial board on the board emulator": func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := switchtest.Fabric{Ports: 8, Backend: "serial", TR: conformTR, TW: conformTW, Header: header + "serial:\n  read_timeout: 100ms\n"}.Wiring(t)
			var chs []int
			for _, s := range w.Switches {
				chs = append(chs, s.Channel)
			}
			bctx, cancel := context.WithCancel(ctx)
			t.Cleanup(cancel)
			dev, host := net.Pipe()
			t.Cleanup(func() { dev.Close() })
			go boardemu.New(boardemu.Config{Channels: chs, Latency: conformTR, Settle: conformTW, Batch: conformB}, nil).Serve(bctx, dev)
			c, err := serialboard.NewBoard(ctx, w, switchctl.Options{Log: log}, host, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close(ctx) })
			return c, w
		},
	}
	for name, openIt := range open {
		tries(t, name, func() error {
			log := &switchctl.ChangeLog{}
			c, w := openIt(t, log)
			cur := map[switchctl.Addr]switchctl.State{}
			t0 := time.Now()
			var arrive []time.Duration
			for i, k := range conformKs {
				arrive = append(arrive, time.Since(t0))
				if err := c.Apply(ctx, changesFor(w, cur, i, k)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			got := spans(w, log, t0, arrive)
			if err := within(got, predict(model, conformKs, got)); err != nil {
				return fmt.Errorf("against the emulator's model: %w", err)
			}
			if err := within(got, predict(hil.ControllerModel(w.Model()), conformKs, got)); err != nil {
				return fmt.Errorf("against the replay's prediction from the wiring map: %w", err)
			}
			return nil
		})
	}
}

// The concurrent sequence, worked by hand with T_r = 3u, T_w = 9u, B = 4 (in u from the start):
// A (0, 6 changes) holds the station 0–6 and settles at 15; B (2, 1) and C (4, 9) queue behind
// it; D (30, 2) finds it idle when settles overlap.
var (
	concurrentAt = []time.Duration{0, 2 * u, 4 * u, 30 * u}
	concurrentKs = []int{6, 1, 9, 2}
)

// TestConformanceConcurrent sends commands that arrive while the station is busy, so that they
// queue, with settles overlapping and serial: to the fake (concurrent Apply calls) and to the
// board emulator (set lines written without waiting for the replies, one command a line), and
// compares with the emulator's controller model and with the times worked by hand.
func TestConformanceConcurrent(t *testing.T) {
	for _, tc := range []struct {
		serial bool
		hand   []span // start and end of A, B, C, D
	}{
		{false, []span{{0, 0, 15 * u}, {2 * u, 6 * u, 18 * u}, {4 * u, 9 * u, 27 * u}, {30 * u, 30 * u, 42 * u}}},
		{true, []span{{0, 0, 15 * u}, {2 * u, 15 * u, 27 * u}, {4 * u, 27 * u, 45 * u}, {30 * u, 45 * u, 57 * u}}},
	} {
		m := ctlmodel.Model{TR: conformTR.Seconds(), TW: conformTW.Seconds(), Batch: conformB, SerialSettle: tc.serial}
		model := emulator.Controller(m)
		// The emulator's model itself against the hand-worked times, at the planned arrivals.
		if got := predict(model, concurrentKs, tc.hand); withinTol(got, tc.hand, time.Microsecond) != nil {
			t.Errorf("serial settles %v: the emulator's model gives %v, worked by hand %v", tc.serial, got, tc.hand)
		}
		tries(t, fmt.Sprintf("fake, serial settles %v", tc.serial), func() error {
			got := concurrentFake(t, tc.serial)
			return within(got, predict(model, concurrentKs, got))
		})
		tries(t, fmt.Sprintf("board emulator, serial settles %v", tc.serial), func() error {
			acked, opc, arrive := concurrentBoard(t, tc.serial)
			want := predict(model, concurrentKs, arrive)
			for i, k := range concurrentKs {
				if d := acked[i] - (want[i].start + dur(m.Busy(k))); d < -conformTol || d > conformTol {
					return fmt.Errorf("line %d (arrived %v) acknowledged at %v, the model says %v", i, arrive[i].arrive, acked[i], want[i].start+dur(m.Busy(k)))
				}
			}
			last := want[len(want)-1].end
			for _, w := range want {
				last = max(last, w.end)
			}
			if d := opc - last; d < -conformTol || d > conformTol {
				return fmt.Errorf("*OPC? answered at %v, the model has everything settled at %v", opc, last)
			}
			return nil
		})
	}
}

func concurrentFake(t *testing.T, serial bool) []span {
	header := fmt.Sprintf("batch: %d\nserial_settle: %v\n", conformB, serial)
	w := switchtest.Fabric{Ports: 8, Backend: "fake", TR: conformTR, TW: conformTW, Header: header}.Wiring(t)
	log := &switchctl.ChangeLog{}
	c := fake.New(w, switchctl.Options{Log: log})
	cur := map[switchctl.Addr]switchctl.State{}
	batches := make([][]switchctl.Change, len(concurrentKs))
	for i, k := range concurrentKs {
		batches[i] = changesFor(w, cur, i, k)
	}
	arrive := make([]time.Duration, len(concurrentKs))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range batches {
		time.Sleep(time.Until(t0.Add(concurrentAt[i])))
		wg.Add(1)
		go func() {
			defer wg.Done()
			// When it calls, not when it was due: a loaded machine may run the goroutines late
			// and in another order, which the model is then fed.
			arrive[i] = time.Since(t0)
			if err := c.Apply(context.Background(), batches[i]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	return spans(w, log, t0, arrive)
}

// concurrentBoard writes one SW line per command at its time and returns when each OK came,
// when the final *OPC? was answered, and when each line was written.
func concurrentBoard(t *testing.T, serial bool) (acked []time.Duration, opc time.Duration, arrive []span) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var chs []int
	for ch := 1; ch <= 20; ch++ {
		chs = append(chs, ch)
	}
	board := boardemu.New(boardemu.Config{Channels: chs, Latency: conformTR, Settle: conformTW, Batch: conformB, SerialSettle: serial}, nil)
	dev, host := net.Pipe()
	defer host.Close()
	go board.Serve(ctx, dev)
	replies := make(chan time.Time, 16)
	t0 := time.Now()
	go func() {
		sc := bufio.NewScanner(host)
		for sc.Scan() {
			replies <- time.Now()
		}
	}()
	// A net.Pipe write blocks until the board reads it, which it does when it is done with the
	// last line: one writer sends the lines in order, each as soon as it is due and taken.
	lines := make(chan string, 16)
	go func() {
		for l := range lines {
			io.WriteString(host, l+"\n") //nolint:errcheck // a failed write shows as a missing reply
		}
	}()
	ch := 1
	for i, k := range concurrentKs {
		var items []string
		for range k {
			items = append(items, fmt.Sprintf("%d CROSS", ch))
			ch++
		}
		time.Sleep(time.Until(t0.Add(concurrentAt[i])))
		arrive = append(arrive, span{arrive: time.Since(t0)})
		lines <- "SW " + strings.Join(items, ",")
	}
	lines <- "*OPC?"
	close(lines)
	var at []time.Duration
	for range len(concurrentKs) + 1 {
		select {
		case r := <-replies:
			at = append(at, r.Sub(t0))
		case <-time.After(5 * time.Second):
			t.Fatalf("the board answered %d of %d lines", len(at), len(concurrentKs)+1)
		}
	}
	sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
	return at[:len(concurrentKs)], at[len(concurrentKs)], arrive
}
