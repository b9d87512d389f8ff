package boardemu

import (
	"strings"
	"testing"
	"time"
)

// FuzzCommand: the boards answer any line with a printable reply (or, for OSW22 sets, none),
// never panic, and keep every channel in a known state.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{"*IDN?", "SW 1 CROSS,2 BAR", "SW? 1,2", "XTAL 1 A ON", "HV ON", "SAFE", "SYST:ERR?", "S 2", "S?", "SW 1,", "SW ,,", "XTAL 1 A"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, line string, kind uint8) {
		b := New(Config{Kind: Kind(kind % 3), Channels: []int{1, 2}}, nil)
		b.command("HV ON", time.Time{})
		b.changes(line) // any line counts its changes without trouble
		reply, _, _ := b.command(line, time.Time{})
		if reply == "" && b.cfg.Kind != OSW22 {
			t.Fatalf("%q got no reply", line)
		}
		for i := 0; i < len(reply); i++ {
			if reply[i] < 0x20 || reply[i] > 0x7e {
				t.Fatalf("%q got a reply with byte %#x: %q", line, reply[i], reply)
			}
		}
		for _, ch := range b.cfg.Channels {
			if s := b.State(ch); !strings.Contains("BAR CROSS A B OFF AB", s) || s == "" {
				t.Fatalf("after %q channel %d is %q", line, ch, s)
			}
		}
	})
}
