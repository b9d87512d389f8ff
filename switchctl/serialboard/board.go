package serialboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tarm/serial"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

func init() {
	switchctl.Register("serial", switchctl.BackendFunc(func(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options) (switchctl.Controller, error) {
		port, err := OpenPort(w, opts.Port, w.Serial.Port)
		if err != nil {
			return nil, err
		}
		return NewBoard(ctx, w, opts, port, w.Serial.ReadTimeout)
	}))
}

// OpenPort opens name (override, if set, else fromMap) with tarm/serial and the wiring map's
// baud rate and read timeout.
func OpenPort(w *switchctl.Wiring, override, fromMap string) (io.ReadWriteCloser, error) {
	name := fromMap
	if override != "" {
		name = override
	}
	if name == "" {
		return nil, fmt.Errorf("serial: no port: set serial.port in the wiring map %s or pass --port", w.Path)
	}
	p, err := serial.OpenPort(&serial.Config{Name: name, Baud: w.Serial.Baud, ReadTimeout: w.Serial.ReadTimeout})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("serial port %s: %w: %w (is the board plugged in? --fake runs without hardware)", name, switchctl.ErrNoHardware, err)
		}
		return nil, fmt.Errorf("serial port %s: %w", name, err)
	}
	// The port carries the name it was opened by, so that every later error names the --port
	// in use rather than the wiring map's serial.port.
	return namedPort{p, name}, nil
}

// namedPort is an open port with the device name it was opened by.
type namedPort struct {
	io.ReadWriteCloser
	name string
}

func (p namedPort) Name() string { return p.name }

// conn is what the switch board and the crystal driver board share: a link, the board's
// identity, and its error queue.
type conn struct {
	link *Link
	w    *switchctl.Wiring
	id   Identity
}

func openConn(ctx context.Context, w *switchctl.Wiring, port io.ReadWriteCloser, readTimeout time.Duration, model string) (*conn, error) {
	link := NewLink(portName(port, w), port, readTimeout, w.Serial.Retries)
	id, err := link.waitIdentity(ctx, w.Serial.ResetTimeout)
	if err == nil && (id.Maker != Maker || id.Model != model) {
		err = fmt.Errorf("serial %s: the board answers as %q, the wiring map %s wants a %s %s", link.name, id, w.Path, Maker, model)
	}
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted while the board was being opened: it may still hold a previous
			// session's state, so it is put safe all the same, as Close would (on its own
			// deadline), once it has said it is the board the map wants.
			err = errors.Join(err, safeOnAbort(ctx, w, link, model))
		}
		return nil, errors.Join(err, link.Close())
	}
	return &conn{link: link, w: w, id: id}, nil
}

// safeOnAbort sends SAFE over link, under switchctl.SafeContext, to a board that answers as
// model.
func safeOnAbort(ctx context.Context, w *switchctl.Wiring, link *Link, model string) error {
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	id, err := link.waitIdentity(sctx, min(w.Serial.ResetTimeout, switchctl.SafeTimeout))
	if err != nil || id.Maker != Maker || id.Model != model {
		return nil // not the board, or not answering: nothing was commanded
	}
	c := &conn{link: link, w: w, id: id}
	if _, _, err := c.command(sctx, "SAFE", w.TW, true); err != nil {
		return fmt.Errorf("putting the board safe after the interrupted open: %w", err)
	}
	return nil
}

func portName(port io.ReadWriteCloser, w *switchctl.Wiring) string {
	if n, ok := port.(interface{ Name() string }); ok {
		return n.Name()
	}
	if w.Serial.Port != "" {
		return w.Serial.Port
	}
	return "port"
}

// command sends one set command; an ERR reply is turned into the board's own message from
// SYST:ERR?.
func (c *conn) command(ctx context.Context, line string, extra time.Duration, final bool) (sent, got time.Time, err error) {
	r, sent, got, err := c.link.exchange(ctx, line, extra, validAck, c.link.retries+1, final)
	if err != nil {
		return sent, got, err
	}
	if r == "ERR" {
		msg, _, _, qerr := c.link.exchange(ctx, "SYST:ERR?", 0, validError, c.link.retries+1, final)
		if qerr != nil {
			return sent, got, fmt.Errorf("serial %s: %q: the board refused it (and SYST:ERR? failed: %w)", c.link.name, line, qerr)
		}
		return sent, got, fmt.Errorf("serial %s: %q: the board refused it: %s", c.link.name, line, msg)
	}
	return sent, got, nil
}

// opc waits for *OPC?: the board answers 1 once every change so far has settled.
func (c *conn) opc(ctx context.Context) (time.Time, error) {
	_, _, got, err := c.link.exchange(ctx, "*OPC?", c.w.TW, validOPC, c.link.retries+1, false)
	return got, err
}

// query sends a batch query (SW?, XTAL?) in lines of MaxBatch channels and returns the words.
func (c *conn) query(ctx context.Context, cmd string, channels []int, allowed ...string) ([]string, error) {
	var out []string
	for len(channels) > 0 {
		k := min(len(channels), MaxBatch)
		items := make([]string, k)
		for i, ch := range channels[:k] {
			items[i] = strconv.Itoa(ch)
		}
		line := cmd + " " + strings.Join(items, ",")
		r, err := c.link.Exchange(ctx, line, 0, validFields(k, allowed...))
		if err != nil {
			return nil, err
		}
		out = append(out, strings.Split(r, ",")...)
		channels = channels[k:]
	}
	return out, nil
}

// Board is the "serial" backend: a board driving many 2×2 switches, one channel each.
type Board struct {
	*conn
	log      *switchctl.ChangeLog
	channels []int // wiring-map order
	chanOf   map[switchctl.Addr]int

	mu     sync.Mutex
	closed bool
}

// NewBoard opens the switch board on port (any transport: the CLI passes a tarm/serial port,
// tests also a pipe). readTimeout is the port's read timeout, 0 for a transport without one.
// It waits for the board's identity first.
func NewBoard(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options, port io.ReadWriteCloser, readTimeout time.Duration) (*Board, error) {
	c, err := openConn(ctx, w, port, readTimeout, ModelSwitch)
	if err != nil {
		return nil, err
	}
	c.link.trace = opts.Trace
	b := &Board{conn: c, log: opts.Log, chanOf: map[switchctl.Addr]int{}}
	for _, s := range w.Switches {
		b.channels = append(b.channels, s.Channel)
		b.chanOf[s.Switch] = s.Channel
	}
	return b, nil
}

// Identity is the board's reply to *IDN?.
func (b *Board) Identity() Identity { return b.id }

func stateWord(s switchctl.State) string {
	if s == switchctl.Cross {
		return "CROSS"
	}
	return "BAR"
}

// Apply sends the batch as SW lines (MaxBatch channels each), then waits for *OPC?. Entries are
// commanded when their line was sent, acknowledged at its OK, settled at *OPC?'s 1.
func (b *Board) Apply(ctx context.Context, changes []switchctl.Change) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return switchctl.ErrClosed
	}
	if err := b.w.Check(changes); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	batch := b.log.NewBatch()
	var entries []switchctl.Entry
	for len(changes) > 0 {
		k := min(len(changes), MaxBatch)
		items := make([]string, k)
		for i, ch := range changes[:k] {
			items[i] = strconv.Itoa(b.chanOf[ch.Switch]) + " " + stateWord(ch.State)
		}
		sent, got, err := b.command(ctx, "SW "+strings.Join(items, ","), 0, false)
		if err != nil {
			b.log.Add(entries...) // commanded and acknowledged, not confirmed settled
			return err
		}
		for _, ch := range changes[:k] {
			entries = append(entries, switchctl.Entry{Batch: batch, Switch: ch.Switch, State: ch.State, Commanded: sent, Acknowledged: got})
		}
		changes = changes[k:]
	}
	settled, err := b.opc(ctx)
	if err == nil {
		for i := range entries {
			entries[i].Settled = settled
		}
	}
	b.log.Add(entries...)
	return err
}

// States reads every switch back with SW?.
func (b *Board) States(ctx context.Context) ([]switchctl.Setting, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, switchctl.ErrClosed
	}
	words, err := b.query(ctx, "SW?", b.channels, "BAR", "CROSS")
	if err != nil {
		return nil, err
	}
	out := make([]switchctl.Setting, len(words))
	for i, s := range b.w.Switches {
		out[i] = switchctl.Setting{Switch: s.Switch, State: switchctl.Bar}
		if words[i] == "CROSS" {
			out[i].State = switchctl.Cross
		}
	}
	return out, nil
}

// Halt sends SAFE: the board puts every channel in Bar and answers once they have settled.
func (b *Board) Halt(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return switchctl.ErrClosed
	}
	return b.halt(ctx, false)
}

func (b *Board) halt(ctx context.Context, final bool) error {
	batch := b.log.NewBatch()
	sent, got, err := b.command(ctx, "SAFE", b.w.TW, final)
	if err != nil {
		return err
	}
	for _, s := range b.w.Switches {
		b.log.Add(switchctl.Entry{Batch: batch, Switch: s.Switch, State: switchctl.Bar, Halt: true, Commanded: sent, Acknowledged: got, Settled: got})
	}
	return nil
}

// Close aborts an exchange in flight, sends SAFE (even when ctx is cancelled: see
// switchctl.SafeContext) and closes the port.
func (b *Board) Close(ctx context.Context) error {
	b.link.abort()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	return errors.Join(b.halt(sctx, true), b.link.Close())
}
