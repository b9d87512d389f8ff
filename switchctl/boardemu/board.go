// Package boardemu emulates the switch boards of package serialboard so that the real serial
// code runs end to end without hardware: a 2×2 switch board, a crystal driver board and a
// single-switch OSW22-style device, each speaking its protocol over any byte stream or on a
// pseudo-terminal (github.com/creack/pty) that tarm/serial opens like a real port.
//
// The board's timing is the one controller model (package ctlmodel, Er-El and Feitelson
// §2.3.3): a set line (SW, XTAL, SAFE, HV, S) of k channels is a command of ⌈k/B⌉ requests, each
// holding the board for the command latency T_r, served one at a time in order of arrival; the
// settle time T_w follows the line's last request and overlaps the next lines unless the settles
// are serial (then the board takes the next set line only once the last has settled). *OPC?
// answers once every change so far has settled; other queries answer at once.
//
// Faults can be injected: garbled replies, dropped lines, and a reset when the port is opened
// (the board ignores input for a while, prints boot noise, and comes back with every channel in
// its safe state).
//
// Every command line received is written to the log as one JSON object per line, in order,
// with what was done about it; tests and the live runner compare it with the change log.
package boardemu

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

// Kind is the board emulated.
type Kind int

const (
	// SwitchBoard drives many 2×2 switches, one channel each.
	SwitchBoard Kind = iota
	// CrystalBoard drives two crystals per element and a high-voltage enable.
	CrystalBoard
	// OSW22 is one single 2×2 switch in the style of Thorlabs' OSW22 (S 1 = bar, S 2 = cross).
	OSW22
)

// Config configures a board.
type Config struct {
	Kind Kind
	// Channels are the board's channels (the wiring map's).
	Channels []int
	// Latency is T_r, how long the board takes to handle one request of a set line; requests are
	// handled one at a time.
	Latency time.Duration
	// Settle is T_w, how long a set line's changes take to settle after its last request.
	Settle time.Duration
	// Batch is B, the most channels the board handles in one request; 0 (the default) is a whole
	// line. Choose a divisor of the protocol's 16 channels a line, so that a client's batch of
	// k changes costs ⌈k/B⌉ requests however it is split into lines.
	Batch int
	// SerialSettle makes the board take the next set line only once the last has settled.
	SerialSettle bool
	// Garble and Drop are the probabilities that a reply is corrupted or that a received line
	// is dropped unhandled; Seed seeds them.
	Garble, Drop float64
	Seed         uint64
	// ResetOnOpen makes the board reset when the port is opened: for ResetDelay (default
	// 300ms) it ignores input, then prints boot noise; every channel returns to its safe state.
	ResetOnOpen bool
	ResetDelay  time.Duration
	// Serial is the identity's serial-number field (default EMU0001).
	Serial string
	// Name names the board in its log (e.g. its port, for one OSW22 per switch).
	Name string
}

// LogEntry is one command line the board received.
type LogEntry struct {
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	// T is seconds since the board started.
	T     float64 `json:"t"`
	Board string  `json:"board,omitempty"`
	Cmd   string  `json:"cmd"`
	Reply string  `json:"reply,omitempty"`
	// Replied is when the reply went out (zero where there was none): with Time, how long the
	// board actually took over the line, which a loaded host stretches beyond its model.
	Replied time.Time `json:"replied,omitzero"`
	// Fault is "dropped" (not handled, no reply), "garbled" (reply corrupted), "resetting"
	// (ignored during a reset), or empty.
	Fault string `json:"fault,omitempty"`
	// Violation reports a crystal interlock breach the command caused (both crystals of an
	// element on, high voltage cut with crystals on), for tests.
	Violation string `json:"violation,omitempty"`
}

// Log collects the entries of one or more boards in order and writes them as JSON lines.
type Log struct {
	mu      sync.Mutex
	w       io.Writer
	entries []LogEntry
	err     error
}

// NewLog returns a log that also writes each entry to w as one JSON line (w may be nil).
func NewLog(w io.Writer) *Log { return &Log{w: w} }

func (l *Log) add(e LogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = len(l.entries) + 1
	l.entries = append(l.entries, e)
	if l.w != nil && l.err == nil {
		b, _ := json.Marshal(e)
		_, l.err = l.w.Write(append(b, '\n'))
	}
}

// Entries returns a copy of the entries so far.
func (l *Log) Entries() []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LogEntry(nil), l.entries...)
}

// Err is the first error writing the log.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Board is one emulated board.
type Board struct {
	cfg   Config
	log   *Log
	start time.Time

	mu          sync.Mutex
	station     *ctlmodel.Station // seconds since start
	rng         *rand.Rand
	switches    map[int]string  // channel → BAR|CROSS (switch board, OSW22 uses channel 0)
	crystals    map[int][2]bool // channel → A on, B on
	hv          bool
	settled     time.Time // when every change so far has settled
	errs        []string  // SYST:ERR? queue
	resetUntil  time.Time
	writeMu     sync.Mutex
	connections int
}

// Model is the board's timing as the one controller model: T_r = Latency, T_w = Settle, B and
// the settle rule.
func (c Config) Model() ctlmodel.Model {
	return ctlmodel.Model{TR: c.Latency.Seconds(), TW: c.Settle.Seconds(), Batch: c.Batch, SerialSettle: c.SerialSettle}
}

// New returns a board with every channel in its safe state.
func New(cfg Config, log *Log) *Board {
	if cfg.ResetDelay == 0 {
		cfg.ResetDelay = 300 * time.Millisecond
	}
	if cfg.Serial == "" {
		cfg.Serial = "EMU0001"
	}
	if cfg.Kind == OSW22 {
		cfg.Channels = []int{0}
	}
	if log == nil {
		log = NewLog(nil)
	}
	b := &Board{cfg: cfg, log: log, start: time.Now(), rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		station: cfg.Model().NewStation()}
	b.safe()
	return b
}

// safe puts every channel in its safe state (caller holds mu or owns b).
func (b *Board) safe() {
	b.switches = map[int]string{}
	b.crystals = map[int][2]bool{}
	for _, ch := range b.cfg.Channels {
		b.switches[ch] = "BAR"
		b.crystals[ch] = [2]bool{}
	}
	b.hv = false
}

// Log is the board's command log.
func (b *Board) Log() *Log { return b.log }

// State returns a switch channel's state (BAR or CROSS) and a crystal channel's (A, B, OFF).
func (b *Board) State(ch int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.Kind == CrystalBoard {
		return crystalWord(b.crystals[ch])
	}
	return b.switches[ch]
}

// HV reports whether high voltage is on (crystal board).
func (b *Board) HV() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hv
}

// connect is called when a client opens the port.
func (b *Board) connect(w io.Writer) {
	b.mu.Lock()
	b.connections++
	reset := b.cfg.ResetOnOpen
	if reset {
		b.safe()
		b.resetUntil = time.Now().Add(b.cfg.ResetDelay)
	}
	b.mu.Unlock()
	if reset {
		// The boot loader's noise, then the firmware's banner: neither is a reply.
		time.AfterFunc(b.cfg.ResetDelay, func() { b.write(w, "\x00\xfe\xff\x80boot\r\nREADY") })
	}
}

func (b *Board) identity() string {
	switch b.cfg.Kind {
	case CrystalBoard:
		return serialboard.Maker + "," + serialboard.ModelCrystal + "," + b.cfg.Serial + ",1.0"
	case OSW22:
		return "THORLABS,OSW22-EMU," + b.cfg.Serial + ",1.0"
	}
	return serialboard.Maker + "," + serialboard.ModelSwitch + "," + b.cfg.Serial + ",1.0"
}

func (b *Board) write(w io.Writer, s string) {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	io.WriteString(w, s+"\n") //nolint:errcheck // a client that went away reads nothing
}

// Serve speaks the protocol over rw until ctx is done or rw ends; the start counts as a client
// opening the port.
func (b *Board) Serve(ctx context.Context, rw io.ReadWriter) error {
	b.connect(rw)
	sc := bufio.NewScanner(rw)
	sc.Buffer(make([]byte, 1024), 64*1024)
	for sc.Scan() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.handleLine(ctx, strings.TrimRight(sc.Text(), "\r"), rw)
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return err
	}
	return ctx.Err()
}

// handleLine handles one received line: the latency, the command, the reply and the log entry.
func (b *Board) handleLine(ctx context.Context, line string, w io.Writer) {
	now := time.Now()
	e := LogEntry{Time: now, T: now.Sub(b.start).Seconds(), Board: b.cfg.Name, Cmd: line}
	b.mu.Lock()
	resetting := now.Before(b.resetUntil)
	drop := b.cfg.Drop > 0 && b.rng.Float64() < b.cfg.Drop
	b.mu.Unlock()
	switch {
	case resetting:
		e.Fault = "resetting"
		b.log.add(e)
		return
	case drop:
		e.Fault = "dropped"
		b.log.add(e)
		return
	}
	var settled time.Time
	if k := b.changes(line); k > 0 {
		b.mu.Lock()
		_, acked, done := b.station.Command(now.Sub(b.start).Seconds(), k)
		b.mu.Unlock()
		sleepUntil(ctx, b.at(acked))
		settled = b.at(done)
	}
	reply, wait, violation := b.command(line, settled)
	if wait {
		b.mu.Lock()
		until := b.settled
		b.mu.Unlock()
		sleepUntil(ctx, until)
	}
	e.Violation = violation
	if reply != "" {
		b.mu.Lock()
		garble := b.cfg.Garble > 0 && b.rng.Float64() < b.cfg.Garble
		pos := b.rng.IntN(len(reply))
		b.mu.Unlock()
		e.Reply = reply
		e.Replied = time.Now()
		if garble {
			e.Fault = "garbled"
			r := []byte(reply)
			r[pos] = 0xbf // line noise: not printable ASCII
			reply = string(r)
		}
		// Logged before the reply goes out: whoever reads the reply finds the line logged.
		b.log.add(e)
		b.write(w, reply)
		return
	}
	b.log.add(e)
}

// spin is how much of a wait is spent polling the clock rather than asleep: a timer wakes a
// goroutine late by tens to hundreds of microseconds on a loaded machine, which would bias the
// latencies the bench measures against the emulator by several percent at 2ms.
const spin = 1000 * time.Microsecond

// sleepUntil waits until t (or ctx is done), sleeping the bulk and polling the clock for the
// last stretch.
func sleepUntil(ctx context.Context, t time.Time) {
	if d := time.Until(t) - spin; d > 0 {
		tm := time.NewTimer(d)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return
		}
	}
	for time.Now().Before(t) && ctx.Err() == nil {
		runtime.Gosched()
	}
}

// at is the wall time of t seconds since the board started.
func (b *Board) at(t float64) time.Time { return b.start.Add(time.Duration(math.Round(t * 1e9))) }

// changes is the number of channels a set line sets, the k of its command (SAFE, HV and the
// OSW22's S set one thing); 0 for a query or a line that does not parse, answered at once.
func (b *Board) changes(line string) int {
	if b.cfg.Kind == OSW22 {
		if f := strings.Fields(strings.ToUpper(line)); len(f) == 2 && f[0] == "S" {
			return 1
		}
		return 0
	}
	head, args, _ := strings.Cut(strings.TrimSpace(line), " ")
	nargs := 1
	switch strings.ToUpper(head) {
	case "SAFE", "HV":
		return 1
	case "XTAL":
		nargs = 2
	case "SW":
	default:
		return 0
	}
	pairs, err := serialboard.ParseBatch(args, nargs)
	if err != nil {
		return 0
	}
	return len(pairs)
}

// markSettled records that the changes of a line settle at t (the model's time; now where the
// line was not timed as a command).
func (b *Board) markSettled(t time.Time) {
	if t.IsZero() {
		t = time.Now()
	}
	if t.After(b.settled) {
		b.settled = t
	}
}

// command carries out one line and returns the reply, whether the reply waits until every
// change has settled, and an interlock violation it caused. A set line's changes settle at
// settled.
func (b *Board) command(line string, settled time.Time) (reply string, waitSettled bool, violation string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.Kind == OSW22 {
		return b.osw22(line, settled)
	}
	head, args, _ := strings.Cut(strings.TrimSpace(line), " ")
	head = strings.ToUpper(head)
	fail := func(code int, msg string) (string, bool, string) {
		b.errs = append(b.errs, fmt.Sprintf("%d,%q", code, msg))
		if len(b.errs) > 16 {
			b.errs = append(b.errs[:15], `-350,"Queue overflow"`)
		}
		return "ERR", false, ""
	}
	crystal := b.cfg.Kind == CrystalBoard
	switch {
	case head == "*IDN?":
		return b.identity(), false, ""
	case head == "*OPC?":
		return "1", true, ""
	case head == "SYST:ERR?":
		if len(b.errs) == 0 {
			return `0,"No error"`, false, ""
		}
		e := b.errs[0]
		b.errs = b.errs[1:]
		return e, false, ""
	case head == "SAFE":
		// Crystals off first, then high voltage off: the order a driver board must keep.
		b.safe()
		b.markSettled(settled)
		return "OK", true, ""
	case head == "SW" && !crystal:
		pairs, err := serialboard.ParseBatch(args, 1)
		if err != nil {
			return fail(-102, "Syntax error: "+err.Error())
		}
		for _, p := range pairs {
			if _, ok := b.switches[p.Channel]; !ok {
				return fail(-222, "Data out of range: channel "+strconv.Itoa(p.Channel))
			}
			if w := strings.ToUpper(p.Arg[0]); w != "BAR" && w != "CROSS" {
				return fail(-224, "Illegal parameter value: "+p.Arg[0])
			}
		}
		for _, p := range pairs {
			b.switches[p.Channel] = strings.ToUpper(p.Arg[0])
		}
		b.markSettled(settled)
		return "OK", false, ""
	case head == "SW?" && !crystal, head == "XTAL?" && crystal:
		chs, err := serialboard.ParseChannels(args)
		if err != nil {
			return fail(-102, "Syntax error: "+err.Error())
		}
		words := make([]string, len(chs))
		for i, ch := range chs {
			if _, ok := b.switches[ch]; !ok {
				return fail(-222, "Data out of range: channel "+strconv.Itoa(ch))
			}
			words[i] = b.switches[ch]
			if crystal {
				words[i] = crystalWord(b.crystals[ch])
			}
		}
		return strings.Join(words, ","), false, ""
	case head == "XTAL" && crystal:
		pairs, err := serialboard.ParseBatch(args, 2)
		if err != nil {
			return fail(-102, "Syntax error: "+err.Error())
		}
		for _, p := range pairs {
			if _, ok := b.crystals[p.Channel]; !ok {
				return fail(-222, "Data out of range: channel "+strconv.Itoa(p.Channel))
			}
			x, on := strings.ToUpper(p.Arg[0]), strings.ToUpper(p.Arg[1])
			if (x != "A" && x != "B") || (on != "ON" && on != "OFF") {
				return fail(-224, "Illegal parameter value: "+strings.Join(p.Arg, " "))
			}
			if on == "ON" && !b.hv {
				return fail(-221, "Settings conflict: high voltage is off")
			}
		}
		var viol []string
		for _, p := range pairs {
			c := b.crystals[p.Channel]
			c[strings.ToUpper(p.Arg[0])[0]-'A'] = strings.ToUpper(p.Arg[1]) == "ON"
			b.crystals[p.Channel] = c
			if c[0] && c[1] {
				viol = append(viol, fmt.Sprintf("both crystals of channel %d on", p.Channel))
			}
		}
		b.markSettled(settled)
		return "OK", false, strings.Join(viol, "; ")
	case head == "HV" && crystal:
		switch strings.ToUpper(strings.TrimSpace(args)) {
		case "ON":
			b.hv = true
			return "OK", false, ""
		case "OFF":
			var on []int
			for ch, c := range b.crystals {
				if c[0] || c[1] {
					on = append(on, ch)
				}
			}
			b.hv = false
			if len(on) > 0 {
				sort.Ints(on)
				return "OK", false, fmt.Sprintf("high voltage off with crystals on (channels %v)", on)
			}
			return "OK", false, ""
		}
		return fail(-224, "Illegal parameter value: "+args)
	case head == "HV?" && crystal:
		if b.hv {
			return "ON", false, ""
		}
		return "OFF", false, ""
	}
	return fail(-113, "Undefined header: "+head)
}

func crystalWord(c [2]bool) string {
	switch {
	case c[0] && c[1]:
		return "AB"
	case c[0]:
		return "A"
	case c[1]:
		return "B"
	}
	return "OFF"
}

// osw22 is the single-switch dialect: S 1 (bar) and S 2 (cross) answer nothing, S? answers 1 or
// 2, *IDN? the identity; anything else answers CMD_NOT_DEFINED.
func (b *Board) osw22(line string, settled time.Time) (string, bool, string) {
	switch f := strings.Fields(strings.ToUpper(line)); {
	case len(f) == 1 && f[0] == "*IDN?":
		return b.identity(), false, ""
	case len(f) == 1 && f[0] == "S?":
		if b.switches[0] == "CROSS" {
			return "2", false, ""
		}
		return "1", false, ""
	case len(f) == 2 && f[0] == "S" && (f[1] == "1" || f[1] == "2"):
		b.switches[0] = map[string]string{"1": "BAR", "2": "CROSS"}[f[1]]
		b.markSettled(settled)
		return "", false, ""
	}
	return "CMD_NOT_DEFINED", false, ""
}

// SetFaults changes the garble and drop probabilities while the board runs.
func (b *Board) SetFaults(garble, drop float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg.Garble, b.cfg.Drop = garble, drop
}

// ReadLog reads a board log written as JSON lines (switch emulate --log); errors name the file
// and the line.
func ReadLog(path string) ([]LogEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("board log: %w", err)
	}
	var out []LogEntry
	for n, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var e LogEntry
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("board log %s:%d: %w", path, n+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}
