package crystal

import (
	"context"
	"errors"
	"fmt"

	"periph.io/x/conn/v3/gpio"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/gpioswitch"
	"github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

func init() {
	switchctl.Register("crystal", switchctl.BackendFunc(open))
}

func open(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options) (switchctl.Controller, error) {
	switch w.Crystal.Transport {
	case "gpio":
		names := make([]string, 0, 2*len(w.Switches)+1)
		for _, s := range w.Switches {
			names = append(names, s.PinA, s.PinB)
		}
		names = append(names, w.Crystal.HVPin)
		pins, err := gpioswitch.ResolvePins(w, names)
		if err != nil {
			return nil, err
		}
		return New(ctx, w, opts, NewGPIODriver(pins[:len(pins)-1], pins[len(pins)-1]))
	case "serial":
		port, err := serialboard.OpenPort(w, opts.Port, w.Serial.Port)
		if err != nil {
			return nil, err
		}
		b, err := serialboard.NewCrystalBoard(ctx, w, port, w.Serial.ReadTimeout)
		if err != nil {
			return nil, err
		}
		return New(ctx, w, opts, NewSerialDriver(b, w))
	}
	return nil, fmt.Errorf("crystal: wiring map %s: transport %q, want gpio or serial", w.Path, w.Crystal.Transport)
}

// GPIODriver drives crystals from GPIO pins: pins[2e] is element e's crystal A, pins[2e+1] its
// crystal B, high level = energised; hv is the high-voltage enable.
type GPIODriver struct {
	pins []gpio.PinIO
	hv   gpio.PinIO
}

// NewGPIODriver returns the GPIO driver.
func NewGPIODriver(pins []gpio.PinIO, hv gpio.PinIO) *GPIODriver { return &GPIODriver{pins, hv} }

// Set writes the levels in order; it stops at the first failure.
func (d *GPIODriver) Set(ctx context.Context, levels []Level) error {
	for _, l := range levels {
		p := d.pins[2*l.Element+l.Crystal]
		if err := p.Out(gpio.Level(l.On)); err != nil {
			return fmt.Errorf("gpio %s: %w", p.Name(), err)
		}
	}
	return ctx.Err()
}

// HV writes the enable pin.
func (d *GPIODriver) HV(_ context.Context, on bool) error {
	if err := d.hv.Out(gpio.Level(on)); err != nil {
		return fmt.Errorf("gpio %s (high voltage): %w", d.hv.Name(), err)
	}
	return nil
}

// Read reads the crystal pins.
func (d *GPIODriver) Read(context.Context) ([][2]bool, error) {
	out := make([][2]bool, len(d.pins)/2)
	for e := range out {
		out[e] = [2]bool{bool(d.pins[2*e].Read()), bool(d.pins[2*e+1].Read())}
	}
	return out, nil
}

// Close releases nothing: periph pins stay registered.
func (d *GPIODriver) Close() error { return nil }

// SerialDriver drives a crystal driver board over the serial protocol's XTAL and HV commands.
type SerialDriver struct {
	b        *serialboard.CrystalBoard
	channels []int
}

// NewSerialDriver returns the serial driver for board b and the wiring map's channels.
func NewSerialDriver(b *serialboard.CrystalBoard, w *switchctl.Wiring) *SerialDriver {
	d := &SerialDriver{b: b}
	for _, s := range w.Switches {
		d.channels = append(d.channels, s.Channel)
	}
	return d
}

// Set sends XTAL lines.
func (d *SerialDriver) Set(ctx context.Context, levels []Level) error {
	ls := make([]serialboard.CrystalLevel, len(levels))
	for i, l := range levels {
		ls[i] = serialboard.CrystalLevel{Channel: d.channels[l.Element], Crystal: byte('A' + l.Crystal), On: l.On}
	}
	_, err := d.b.SetCrystals(ctx, ls, false)
	return err
}

// HV sends HV ON or HV OFF.
func (d *SerialDriver) HV(ctx context.Context, on bool) error { return d.b.SetHV(ctx, on, false) }

// Read sends XTAL?.
func (d *SerialDriver) Read(ctx context.Context) ([][2]bool, error) {
	words, err := d.b.Crystals(ctx, d.channels)
	if err != nil {
		return nil, err
	}
	out := make([][2]bool, len(words))
	for i, w := range words {
		a, b, err := serialboard.ParseCrystalWord(w)
		if err != nil {
			return nil, err
		}
		out[i] = [2]bool{a, b}
	}
	return out, nil
}

// Safe sends SAFE, so the board's log and firmware end in its own safe state.
func (d *SerialDriver) Safe(ctx context.Context) error { return d.b.Safe(ctx, false) }

// Close closes the port.
func (d *SerialDriver) Close() error { return errors.Join(d.b.Close()) }
