package program_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/gpu/program"
)

// The release instant of a signal reads back no earlier than the command's end, and a nanosecond
// less would read back earlier: never early, never a whole nanosecond late.
func TestNotBeforeNS(t *testing.T) {
	for _, sec := range []float64{0, -1, 1e-9, 0.265075686, 0.262075686 + 0.003, 1.5e-6, 123.456789012} {
		check(t, sec)
	}
	rapid.Check(t, func(rt *rapid.T) {
		check(rt, rapid.Float64Range(0, 1e4).Draw(rt, "sec"))
	})
}

func check(t interface {
	Helper()
	Errorf(string, ...any)
}, sec float64) {
	t.Helper()
	ns := program.NotBeforeNS(sec)
	if got := float64(ns) * 1e-9; got < sec && sec > 0 {
		t.Errorf("NotBeforeNS(%v) = %d reads back as %v, before the end", sec, ns, got)
	}
	if ns > 0 && float64(ns-1)*1e-9 >= sec {
		t.Errorf("NotBeforeNS(%v) = %d, but %d reads back as %v, not before", sec, ns, ns-1, float64(ns-1)*1e-9)
	}
}
