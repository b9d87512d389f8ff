package switchctl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Addr names one 2×2 switch of the Beneš fabric: its stage (0 at the inputs) and its index in
// the stage, in the wiring convention of the README.
type Addr struct {
	Stage, Index int
}

func (a Addr) String() string { return strconv.Itoa(a.Stage) + ":" + strconv.Itoa(a.Index) }

// ParseAddr parses "stage:index" (e.g. "2:1").
func ParseAddr(s string) (Addr, error) {
	st, ix, ok := strings.Cut(s, ":")
	if !ok {
		return Addr{}, fmt.Errorf("switch %q: want stage:index, e.g. 0:3", s)
	}
	a, err1 := strconv.Atoi(st)
	b, err2 := strconv.Atoi(ix)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return Addr{}, fmt.Errorf("switch %q: stage and index must be integers ≥ 0", s)
	}
	return Addr{a, b}, nil
}

// State is a switch's configuration.
type State uint8

const (
	// Bar connects lane 0 to 0 and 1 to 1. It is also the safe state of a plain switch board
	// (relays de-energised) and the state every switch starts in.
	Bar State = iota
	// Cross connects lane 0 to 1 and 1 to 0.
	Cross
	// Off is reported only by crystal drivers in the safe state: no crystal energised, so the
	// element deflects nothing. It cannot be commanded.
	Off
)

func (s State) String() string {
	switch s {
	case Bar:
		return "bar"
	case Cross:
		return "cross"
	case Off:
		return "off"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// ParseState parses "bar" or "cross" (any case).
func ParseState(s string) (State, error) {
	switch strings.ToLower(s) {
	case "bar":
		return Bar, nil
	case "cross":
		return Cross, nil
	}
	return 0, fmt.Errorf("state %q: want bar or cross", s)
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads bar, cross or off.
func (s *State) UnmarshalText(b []byte) error {
	if strings.EqualFold(string(b), "off") {
		*s = Off
		return nil
	}
	v, err := ParseState(string(b))
	*s = v
	return err
}

// Change asks for one switch to be put in one state.
type Change struct {
	Switch Addr
	State  State
}

func (c Change) String() string { return c.Switch.String() + "=" + c.State.String() }

// ParseChange parses "stage:index=state" (e.g. "0:3=cross").
func ParseChange(s string) (Change, error) {
	a, st, ok := strings.Cut(s, "=")
	if !ok {
		return Change{}, fmt.Errorf("change %q: want stage:index=bar|cross, e.g. 0:3=cross", s)
	}
	addr, err := ParseAddr(a)
	if err != nil {
		return Change{}, fmt.Errorf("change %q: %w", s, err)
	}
	state, err := ParseState(st)
	if err != nil {
		return Change{}, fmt.Errorf("change %q: %w", s, err)
	}
	return Change{addr, state}, nil
}

// Setting is one switch's state as read back from the hardware.
type Setting struct {
	Switch Addr
	State  State
}

// Controller drives the switches of one fabric. Every method takes a context; hardware calls
// give up when it is done. Implementations are safe for concurrent use; calls are serialised
// where the hardware needs it.
type Controller interface {
	// Apply puts every switch of the batch in its state and returns once every change has
	// settled (the device confirmed, or the settle time elapsed). Each change is recorded in the
	// change log given at Open. An address not in the wiring map is an error and nothing is
	// changed.
	Apply(ctx context.Context, changes []Change) error
	// States reads every mapped switch's state back, in wiring-map order.
	States(ctx context.Context) ([]Setting, error)
	// Halt puts the hardware in its safe state: a plain board all Bar, a crystal driver every
	// crystal off and then high voltage off.
	Halt(ctx context.Context) error
	// Close puts the hardware safe (as Halt) and releases it. Later calls fail with ErrClosed;
	// a second Close returns nil.
	Close(ctx context.Context) error
}

// ErrClosed is returned by calls on a closed Controller.
var ErrClosed = errors.New("switch controller is closed")

// ErrNoHardware marks an error that means the hardware is absent (no such port, no such pin);
// the CLI then suggests --fake.
var ErrNoHardware = errors.New("switch hardware not found")

// MarshalText writes "stage:index".
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads "stage:index".
func (a *Addr) UnmarshalText(b []byte) error {
	v, err := ParseAddr(string(b))
	*a = v
	return err
}

// SafeTimeout bounds how long putting hardware safe may take on an exit path.
const SafeTimeout = 5 * time.Second

// SafeContext returns a context for putting hardware safe on an exit path: it keeps ctx's values
// but not its cancellation (an interrupted run must still reach the safe state), and ends after
// SafeTimeout.
func SafeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), SafeTimeout)
}

// SleepUntil waits until t or until ctx is done, whichever is first; it returns ctx's error in
// the second case. Backends use it for settle and dead times so that a cancelled run stops at
// once.
func SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
