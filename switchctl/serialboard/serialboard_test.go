package serialboard_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/tarm/serial"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/serialboard"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

// serialTimeouts is the serial section's read and reset timeouts for the tests that do not
// time the timeouts themselves. A reply timeout (two read timeouts) is a deadline on the
// emulator's goroutine being scheduled: under the race detector on a loaded machine a reply can
// take longer than 200ms, is taken for lost and sent again, and the retries run out, or the
// identity misses a 2s reset timeout. Under -race the read timeout is three times longer and the
// reset timeout twenty seconds; a board that answers is waited for no longer than it takes, so
// only lost lines cost the longer wait.
var serialTimeouts = map[bool]string{
	false: "serial:\n  read_timeout: 100ms\n  reset_timeout: 5s\n",
	true:  "serial:\n  read_timeout: 300ms\n  reset_timeout: 20s\n",
}[raceEnabled]

func fabric(ports int, header string) switchtest.Fabric {
	return switchtest.Fabric{Ports: ports, Backend: "serial", TR: 200 * time.Microsecond, TW: 500 * time.Microsecond,
		Header: serialTimeouts + header}
}

// timedFabric is fabric with a 100ms read timeout under -race too, for the tests that time the
// reply timeouts (and only wait on lines that are never answered).
func timedFabric(ports int, header string) switchtest.Fabric {
	f := fabric(ports, header)
	f.Header = "serial:\n  read_timeout: 100ms\n  reset_timeout: 2s\n" + header
	return f
}

func channels(w *switchctl.Wiring) []int {
	var out []int
	for _, s := range w.Switches {
		out = append(out, s.Channel)
	}
	return out
}

// startPTY serves a board for w on a pseudo-terminal for the test's duration.
func startPTY(t *testing.T, w *switchctl.Wiring, cfg boardemu.Config) *boardemu.PTY {
	t.Helper()
	if cfg.Channels == nil {
		cfg.Channels = channels(w)
	}
	p, err := boardemu.StartPTY(context.Background(), boardemu.New(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// transport serves a board emulator and opens the serial backend on it: over a pty through
// tarm/serial (the real code path), or over an in-memory pipe (no kernel, no tarm/serial).
type transport struct {
	name string
	open func(t *testing.T, w *switchctl.Wiring, cfg boardemu.Config, log *switchctl.ChangeLog) (*boardemu.Board, switchctl.Controller, error)
}

var transports = []transport{
	{"pty", func(t *testing.T, w *switchctl.Wiring, cfg boardemu.Config, log *switchctl.ChangeLog) (*boardemu.Board, switchctl.Controller, error) {
		p := startPTY(t, w, cfg)
		c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log, Port: p.Path})
		return p.Board(), c, err
	}},
	{"pipe", func(t *testing.T, w *switchctl.Wiring, cfg boardemu.Config, log *switchctl.ChangeLog) (*boardemu.Board, switchctl.Controller, error) {
		if cfg.Channels == nil {
			cfg.Channels = channels(w)
		}
		b := boardemu.New(cfg, nil)
		dev, host := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		go b.Serve(ctx, dev)
		t.Cleanup(func() { cancel(); dev.Close() })
		// The wiring map's read timeout: a pipe never returns an empty read, so the timing
		// (reply timeouts, retries) is the pty's.
		c, err := serialboard.NewBoard(context.Background(), w, switchctl.Options{Log: log}, host, w.Serial.ReadTimeout)
		return b, c, err
	}},
}

// forTransports runs test as one subtest per transport.
func forTransports(t *testing.T, test func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { test(t, tr) })
	}
}

func mustOpen(t *testing.T, tr transport, w *switchctl.Wiring, cfg boardemu.Config, log *switchctl.ChangeLog) (*boardemu.Board, switchctl.Controller) {
	t.Helper()
	b, c, err := tr.open(t, w, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tr transport) {
		switchtest.Run(t, switchtest.Config{
			Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
				w := fabric(8, "").Wiring(t)
				_, c := mustOpen(t, tr, w, boardemu.Config{Latency: 200 * time.Microsecond, Settle: 500 * time.Microsecond}, log)
				return c, w
			},
		})
	})
}

func TestResetOnOpen(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tr transport) {
		w := fabric(4, "").Wiring(t)
		start := time.Now()
		b, c := mustOpen(t, tr, w, boardemu.Config{ResetOnOpen: true, ResetDelay: 300 * time.Millisecond}, nil)
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Errorf("Open returned after %v, before the board's 300ms reset ended", took)
		}
		if err := c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		ignored := 0
		for _, e := range b.Log().Entries() {
			if e.Fault == "resetting" {
				ignored++
			}
		}
		if ignored == 0 {
			t.Errorf("no command was sent during the reset: Open slept instead of asking for the identity")
		}
	})
}

// TestResetOnReopen: the pty board resets every time the port is opened again. It waits for the
// emulator to see each close before reopening (a sleep lost that race under load), and gives the
// identity a generous reset_timeout: Open returns as soon as the board answers, so a loaded
// machine only waits longer where it must.
func TestResetOnReopen(t *testing.T) {
	t.Parallel()
	w := fabric(4, "").Wiring(t)
	w.Serial.ResetTimeout = 30 * time.Second
	p := startPTY(t, w, boardemu.Config{ResetOnOpen: true, ResetDelay: 300 * time.Millisecond})
	for i := 0; i < 2; i++ {
		start := time.Now()
		c, err := switchctl.Open(context.Background(), w, switchctl.Options{Port: p.Path})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Errorf("Open %d returned after %v: the board did not reset", i+1, took)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The emulator sees the port closed at its next read (EIO on the master); reopening
		// before that, while it is busy, would go unnoticed.
		for deadline := time.Now().Add(30 * time.Second); p.Connected(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the emulator never saw the port closed")
			}
		}
	}
}

func TestGarbledAndDroppedRetried(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tr transport) {
		w := fabric(8, "  retries: 8\n").Wiring(t)
		b, c := mustOpen(t, tr, w, boardemu.Config{Garble: 0.2, Drop: 0.15, Seed: 3}, nil)
		defer c.Close(context.Background())
		for i := 0; i < 12; i++ {
			s := w.Switches[i%len(w.Switches)].Switch
			st := switchctl.State(i % 2)
			if err := c.Apply(context.Background(), []switchctl.Change{{Switch: s, State: st}}); err != nil {
				t.Fatalf("Apply %d: %v", i, err)
			}
			got, err := c.States(context.Background())
			if err != nil {
				t.Fatalf("States %d: %v", i, err)
			}
			for _, g := range got {
				if g.Switch == s && g.State != st {
					t.Fatalf("switch %s is %s, want %s", s, g.State, st)
				}
			}
		}
		faults := map[string]int{}
		for _, e := range b.Log().Entries() {
			faults[e.Fault]++
		}
		if faults["garbled"] == 0 || faults["dropped"] == 0 {
			t.Errorf("faults injected: %v; want both garbled replies and dropped lines", faults)
		}
	})
}

// TestRetriesExhausted: a board that drops every line, or garbles every reply, gives a clear
// error after the configured number of tries, within the reply timeouts.
func TestRetriesExhausted(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tr transport) {
		w := timedFabric(4, "  retries: 2\n").Wiring(t)
		b, c := mustOpen(t, tr, w, boardemu.Config{}, nil)
		ctx := context.Background()
		b.SetFaults(0, 1) // every line dropped from now on
		start := time.Now()
		err := c.Apply(ctx, []switchctl.Change{{Switch: w.Switches[1].Switch, State: switchctl.Cross}})
		if err == nil || !strings.Contains(err.Error(), `"SW 2 CROSS": no valid reply after 3 tries (last: no reply within 200ms)`) {
			t.Errorf("Apply to a board that drops everything = %v, want no valid reply after 3 tries", err)
		}
		if took := time.Since(start); took < 600*time.Millisecond || took > 3*time.Second {
			t.Errorf("gave up after %v, want 3 tries of 200ms", took)
		}
		b.SetFaults(1, 0) // every reply garbled
		_, err = c.States(ctx)
		if err == nil || !strings.Contains(err.Error(), "garbled reply") {
			t.Errorf("States with every reply garbled = %v, want a garbled-reply error", err)
		}
		b.SetFaults(0, 0)
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

func TestBoardError(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tr transport) {
		w := fabric(4, "").Wiring(t)
		// The board has channels 2..6 only: the map's channel 1 is not on it.
		_, c := mustOpen(t, tr, w, boardemu.Config{Channels: channels(w)[1:]}, nil)
		ctx := context.Background()
		defer c.Close(ctx)
		err := c.Apply(ctx, []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}})
		if err == nil || !strings.Contains(err.Error(), `-222,"Data out of range: channel 1"`) {
			t.Errorf("Apply on a missing channel = %v, want the board's -222 error", err)
		}
	})
}

func TestWrongBoard(t *testing.T) {
	t.Parallel()
	w := fabric(4, "").Wiring(t)
	p := startPTY(t, w, boardemu.Config{Kind: boardemu.CrystalBoard})
	_, err := switchctl.Open(context.Background(), w, switchctl.Options{Port: p.Path})
	if err == nil || !strings.Contains(err.Error(), "XDB-KLTN") {
		t.Errorf("Open on a crystal board = %v, want an error naming what answered", err)
	}
}

func TestMissingPort(t *testing.T) {
	w := fabric(4, "").Wiring(t)
	_, err := switchctl.Open(context.Background(), w, switchctl.Options{Port: "/dev/tetris-hil-no-such-port"})
	if !errors.Is(err, switchctl.ErrNoHardware) || !strings.Contains(err.Error(), "--fake") {
		t.Errorf("Open on a missing port = %v, want ErrNoHardware suggesting --fake", err)
	}
}

// rawPTY returns a pseudo-terminal whose master the test drives by hand, and the port tarm/serial
// opened on its slave with a 100ms read timeout.
func rawPTY(t *testing.T) (*os.File, *serial.Port) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	name := slave.Name()
	slave.Close()
	port, err := serial.OpenPort(&serial.Config{Name: name, Baud: 115200, ReadTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	return master, port
}

// TestEmptyReadIsNoData: tarm/serial returns an empty read when its timeout passes with no
// data; the link must wait on, also when a reply pauses in the middle.
func TestEmptyReadIsNoData(t *testing.T) {
	t.Parallel()
	master, port := rawPTY(t)
	link := serialboard.NewLink("pty", port, 100*time.Millisecond, 0)
	defer link.Close()
	time.Sleep(350 * time.Millisecond) // idle: several empty reads
	go func() {
		buf := make([]byte, 64)
		master.Read(buf)
		master.Write([]byte("O"))
		time.Sleep(350 * time.Millisecond) // several read timeouts: empty reads in the reply
		master.Write([]byte("K\r\n"))
	}()
	r, err := link.Exchange(context.Background(), "SW 1 BAR", time.Second, func(s string) error {
		if s != "OK" {
			return errors.New("want OK")
		}
		return nil
	})
	if err != nil || r != "OK" {
		t.Errorf("Exchange = %q, %v; want OK across an empty read", r, err)
	}
}

// TestCloseDuringRead: Close while an exchange waits for a reply that never comes returns the
// exchange with ErrClosed at once, and the reader blocked in tarm/serial's Read stops within a
// read timeout.
func TestCloseDuringRead(t *testing.T) {
	t.Parallel()
	_, port := rawPTY(t)
	link := serialboard.NewLink("pty", port, 100*time.Millisecond, 50)
	errc := make(chan error, 1)
	go func() {
		_, err := link.Exchange(context.Background(), "*OPC?", time.Hour, func(string) error { return nil })
		errc <- err
	}()
	time.Sleep(150 * time.Millisecond)
	start := time.Now()
	if err := link.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Close took %v with a read in flight", took)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, switchctl.ErrClosed) {
			t.Errorf("exchange in flight returned %v, want ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the exchange in flight did not return after Close")
	}
}

// TestCloseDuringApply: closing a controller whose board stopped answering ends the Apply in
// flight with ErrClosed at once; Close still sends SAFE, which the board (answering again)
// confirms.
func TestCloseDuringApply(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tr transport) {
		w := timedFabric(4, "  retries: 20\n").Wiring(t)
		b, c := mustOpen(t, tr, w, boardemu.Config{}, nil)
		b.SetFaults(0, 1)
		errc := make(chan error, 1)
		go func() {
			errc <- c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}})
		}()
		time.Sleep(100 * time.Millisecond)
		b.SetFaults(0, 0) // the board answers again: SAFE goes through
		start := time.Now()
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, switchctl.ErrClosed) {
				t.Errorf("Apply in flight returned %v, want ErrClosed", err)
			}
		case <-time.After(time.Second):
			t.Fatal("the Apply in flight did not return after Close")
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Close took %v", took)
		}
		es := b.Log().Entries()
		if last := es[len(es)-1]; last.Cmd != "SAFE" || last.Reply != "OK" {
			t.Errorf("the board's log ends in %+v, want SAFE answered OK", last)
		}
	})
}

// session is a fixed exchange: open, a batch of three, a read-back of four switches, SAFE.
func session(t *testing.T, port *serialboard.Record, w *switchctl.Wiring) {
	t.Helper()
	ctx := context.Background()
	c, err := serialboard.NewBoard(ctx, w, switchctl.Options{}, port, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, []switchctl.Change{
		{Switch: switchctl.Addr{Stage: 0, Index: 1}, State: switchctl.Cross},
		{Switch: switchctl.Addr{Stage: 1, Index: 0}, State: switchctl.Cross},
		{Switch: switchctl.Addr{Stage: 2, Index: 1}, State: switchctl.Bar},
	}); err != nil {
		t.Fatal(err)
	}
	st, err := c.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st[1].State != switchctl.Cross || st[2].State != switchctl.Cross || st[0].State != switchctl.Bar {
		t.Errorf("read back %v", st)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRecordedSession records the fixed session against the emulator (periph conntest style)
// and compares the transcript with testdata/session.txt; TestPlayback then replays that file
// without any device.
func TestRecordedSession(t *testing.T) {
	w := fabric(4, "").Wiring(t)
	dev, host := net.Pipe()
	b := boardemu.New(boardemu.Config{Channels: channels(w)}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Serve(ctx, dev)
	rec := &serialboard.Record{Port: host}
	session(t, rec, w)
	goldenfile.Check(t, filepath.Join("testdata", "session.txt"), []byte(rec.Transcript()))
}

func TestPlayback(t *testing.T) {
	tr, err := os.ReadFile(filepath.Join("testdata", "session.txt"))
	if err != nil {
		t.Fatal(err)
	}
	w := fabric(4, "").Wiring(t)
	pb := serialboard.NewPlayback(string(tr))
	session(t, &serialboard.Record{Port: pb}, w)
	if err := pb.Err(); err != nil {
		t.Error(err)
	}
	// A client that sends something else is caught.
	pb = serialboard.NewPlayback(strings.Replace(string(tr), "> SAFE", "> SW 1 BAR", 1))
	c, err := serialboard.NewBoard(context.Background(), w, switchctl.Options{}, pb, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Apply(context.Background(), []switchctl.Change{{Switch: switchctl.Addr{Stage: 0, Index: 1}, State: switchctl.Cross}})
	if pb.Err() == nil {
		t.Error("playback accepted a session that differs from the transcript")
	}
}

// TestStaleReplyAfterCancel: a command cancelled while its reply is on the way must not lend
// that reply to the next command: Halt returns only once the board has handled SAFE.
func TestStaleReplyAfterCancel(t *testing.T) {
	t.Parallel()
	w := fabric(4, "").Wiring(t)
	p := startPTY(t, w, boardemu.Config{Latency: 80 * time.Millisecond})
	c, err := switchctl.Open(context.Background(), w, switchctl.Options{Port: p.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Apply(ctx, []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Apply = %v, want the deadline", err)
	}
	if err := c.Halt(context.Background()); err != nil {
		t.Fatal(err)
	}
	es := p.Board().Log().Entries()
	if last := es[len(es)-1]; last.Cmd != "SAFE" {
		t.Errorf("Halt returned before the board handled SAFE (its log ends in %q): it took the cancelled command's reply", last.Cmd)
	}
}

func serialboardNewBoard(ctx context.Context, w *switchctl.Wiring, port net.Conn) (switchctl.Controller, error) {
	return serialboard.NewBoard(ctx, w, switchctl.Options{}, port, 0)
}

// Errors name the port in use (--port), not the wiring map's serial.port it overrides.
func TestErrorsNameThePortInUse(t *testing.T) {
	t.Parallel()
	w := fabric(4, "").Wiring(t)
	w.Serial.Port = "/dev/ttyACM0"
	w.Serial.ResetTimeout = 300 * time.Millisecond
	p := startPTY(t, w, boardemu.Config{Drop: 1}) // a board that answers nothing
	_, err := switchctl.Open(context.Background(), w, switchctl.Options{Port: p.Path})
	if err == nil || !strings.Contains(err.Error(), "serial "+p.Path+": no identity") || strings.Contains(err.Error(), "ttyACM0") {
		t.Fatalf("Open with --port %s: %v; want the error to name %s and not the map's port", p.Path, err, p.Path)
	}
}
