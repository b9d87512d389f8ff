package serialboard

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

// CrystalLevel sets one crystal of one channel of a crystal driver board.
type CrystalLevel struct {
	Channel int
	// Crystal is 'A' (Bar) or 'B' (Cross).
	Crystal byte
	On      bool
}

// CrystalBoard is a crystal driver board: it switches single crystals and the high-voltage
// enable as told and keeps no interlock of its own; the break-before-make rule is the crystal
// backend's (package crystal), which drives this board.
type CrystalBoard struct {
	*conn
}

// NewCrystalBoard opens a crystal driver board on port (see NewBoard).
func NewCrystalBoard(ctx context.Context, w *switchctl.Wiring, port io.ReadWriteCloser, readTimeout time.Duration) (*CrystalBoard, error) {
	c, err := openConn(ctx, w, port, readTimeout, ModelCrystal)
	if err != nil {
		return nil, err
	}
	return &CrystalBoard{c}, nil
}

// SetCrystals sends XTAL lines (MaxBatch levels each) and returns when the last was
// acknowledged.
func (b *CrystalBoard) SetCrystals(ctx context.Context, levels []CrystalLevel, final bool) (time.Time, error) {
	items := make([]string, len(levels))
	for i, l := range levels {
		on := "OFF"
		if l.On {
			on = "ON"
		}
		items[i] = strconv.Itoa(l.Channel) + " " + string(l.Crystal) + " " + on
	}
	var got time.Time
	for _, line := range batchLines("XTAL", items) {
		var err error
		if _, got, err = b.command(ctx, line, 0, final); err != nil {
			return got, err
		}
	}
	return got, nil
}

// SetHV switches the high-voltage enable.
func (b *CrystalBoard) SetHV(ctx context.Context, on, final bool) error {
	cmd := "HV OFF"
	if on {
		cmd = "HV ON"
	}
	_, _, err := b.command(ctx, cmd, 0, final)
	return err
}

// Crystals reads channels back: each "A", "B", "OFF" or "AB" (both on: an interlock breach).
func (b *CrystalBoard) Crystals(ctx context.Context, channels []int) ([]string, error) {
	return b.query(ctx, "XTAL?", channels, "A", "B", "OFF", "AB")
}

// Safe sends SAFE: the board switches every crystal off, then high voltage off.
func (b *CrystalBoard) Safe(ctx context.Context, final bool) error {
	_, _, err := b.command(ctx, "SAFE", 0, final)
	return err
}

// Abort makes exchanges in flight return ErrClosed; only final ones go through after it.
func (b *CrystalBoard) Abort() { b.link.abort() }

// Close closes the port.
func (b *CrystalBoard) Close() error { return b.link.Close() }

// ParseCrystalWord is the inverse of the board's XTAL? words.
func ParseCrystalWord(s string) (a, bOn bool, err error) {
	switch strings.ToUpper(s) {
	case "A":
		return true, false, nil
	case "B":
		return false, true, nil
	case "OFF":
		return false, false, nil
	case "AB":
		return true, true, nil
	}
	return false, false, errors.New("crystal state " + strconv.Quote(s))
}
