package serialboard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The protocol (see the README's "Switch board protocol"): ASCII lines ending in LF (a CR before
// it is ignored), at most MaxLine bytes, exactly one reply line per command line.
const (
	// MaxLine is the longest line either side sends, LF excluded.
	MaxLine = 256
	// MaxBatch is the most channels one SW, SW?, XTAL or XTAL? line carries; longer batches are
	// split into several lines (each one request to the board).
	MaxBatch = 16
	// Maker is the first identity field of the boards this package knows.
	Maker = "TETRIS-HIL"
	// ModelSwitch and ModelCrystal are the identity's model field of a 2×2 switch board and of
	// a crystal driver board.
	ModelSwitch  = "SWB-2X2"
	ModelCrystal = "XDB-KLTN"
)

// Identity is a board's reply to *IDN?: maker, model, serial number, firmware.
type Identity struct {
	Maker, Model, Serial, Firmware string
}

func (id Identity) String() string {
	return strings.Join([]string{id.Maker, id.Model, id.Serial, id.Firmware}, ",")
}

// ParseIdentity parses a *IDN? reply: four comma-separated printable fields, none empty.
func ParseIdentity(s string) (Identity, error) {
	if err := printable(s); err != nil {
		return Identity{}, err
	}
	f := strings.Split(s, ",")
	if len(f) != 4 {
		return Identity{}, fmt.Errorf("identity %q: want maker,model,serial,firmware", s)
	}
	for _, x := range f {
		if strings.TrimSpace(x) == "" {
			return Identity{}, fmt.Errorf("identity %q has an empty field", s)
		}
	}
	return Identity{f[0], f[1], f[2], f[3]}, nil
}

// printable refuses anything but printable ASCII: line noise and a board's boot garbage are
// not replies.
func printable(s string) error {
	if s == "" {
		return errors.New("empty line")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return fmt.Errorf("byte %#02x at %d is not printable ASCII", s[i], i)
		}
	}
	return nil
}

func validAck(s string) error {
	if s == "OK" || s == "ERR" {
		return nil
	}
	return errors.New("want OK or ERR")
}

func validOPC(s string) error {
	if s == "1" {
		return nil
	}
	return errors.New("want 1")
}

// validError checks a SYST:ERR? reply: <code>,"<message>".
func validError(s string) error {
	if err := printable(s); err != nil {
		return err
	}
	code, msg, ok := strings.Cut(s, ",")
	if _, err := strconv.Atoi(code); !ok || err != nil || len(msg) < 2 || msg[0] != '"' || msg[len(msg)-1] != '"' {
		return errors.New(`want <code>,"<message>"`)
	}
	return nil
}

// validFields returns a check for a reply of n comma-separated words from allowed.
func validFields(n int, allowed ...string) func(string) error {
	return func(s string) error {
		f := strings.Split(s, ",")
		if len(f) != n {
			return fmt.Errorf("want %d fields, got %d", n, len(f))
		}
		for _, x := range f {
			ok := false
			for _, a := range allowed {
				ok = ok || x == a
			}
			if !ok {
				return fmt.Errorf("field %q: want one of %s", x, strings.Join(allowed, ", "))
			}
		}
		return nil
	}
}

// Pair is one channel and its argument in a batch line ("3 CROSS", "3 A ON").
type Pair struct {
	Channel int
	Arg     []string
}

// ParseBatch parses the arguments of a batch command: "<ch> <arg>...[,<ch> <arg>...]", each
// with nargs arguments. The board emulator uses it; it is here so that both sides share one
// grammar.
func ParseBatch(s string, nargs int) ([]Pair, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("missing channel")
	}
	var out []Pair
	for _, item := range strings.Split(s, ",") {
		f := strings.Fields(item)
		if len(f) != 1+nargs {
			return nil, fmt.Errorf("%q: want a channel and %d argument(s)", strings.TrimSpace(item), nargs)
		}
		ch, err := strconv.Atoi(f[0])
		if err != nil || ch < 0 {
			return nil, fmt.Errorf("%q: channel %q is not a number", strings.TrimSpace(item), f[0])
		}
		out = append(out, Pair{ch, f[1:]})
	}
	if len(out) > MaxBatch {
		return nil, fmt.Errorf("%d channels in one line, at most %d", len(out), MaxBatch)
	}
	return out, nil
}

// ParseChannels parses "<ch>[,<ch>]..." (the argument of SW? and XTAL?).
func ParseChannels(s string) ([]int, error) {
	ps, err := ParseBatch(s, 0)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Channel
	}
	return out, nil
}

// batchLines splits items ("3 CROSS") into lines of at most MaxBatch items after the command.
func batchLines(cmd string, items []string) []string {
	var lines []string
	for len(items) > 0 {
		k := min(len(items), MaxBatch)
		lines = append(lines, cmd+" "+strings.Join(items[:k], ","))
		items = items[k:]
	}
	return lines
}
