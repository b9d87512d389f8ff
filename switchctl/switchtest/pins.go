package switchtest

import (
	"errors"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
)

// PinEvent is one level written to a recorded pin.
type PinEvent struct {
	Pin   string
	Level gpio.Level
	At    time.Time
}

// Pins records every level change of its pins, in the one order they happened (periph's
// gpiotest pins under one lock), and can make a pin's next writes fail.
type Pins struct {
	mu     sync.Mutex
	events []PinEvent
	fail   map[string]int
}

// Pin is a gpiotest pin whose writes are recorded.
type Pin struct {
	*gpiotest.Pin
	pins *Pins
}

// New returns a recorded pin named name, low.
func (ps *Pins) New(name string) *Pin {
	return &Pin{Pin: &gpiotest.Pin{N: name, Num: -1}, pins: ps}
}

// ErrInjected is what a pin made to fail returns.
var ErrInjected = errors.New("injected pin failure")

// Fail makes the next n writes to the pin name fail (without changing its level).
func (ps *Pins) Fail(name string, n int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.fail == nil {
		ps.fail = map[string]int{}
	}
	ps.fail[name] = n
}

// Out records the level, or fails as told.
func (p *Pin) Out(l gpio.Level) error {
	ps := p.pins
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.fail[p.N] > 0 {
		ps.fail[p.N]--
		return ErrInjected
	}
	if err := p.Pin.Out(l); err != nil {
		return err
	}
	ps.events = append(ps.events, PinEvent{p.N, l, time.Now()})
	return nil
}

// Events returns the writes so far, in order.
func (ps *Pins) Events() []PinEvent {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]PinEvent(nil), ps.events...)
}
