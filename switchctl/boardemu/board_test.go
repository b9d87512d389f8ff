package boardemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// session feeds lines to a board and returns its replies, one per line.
func session(t *testing.T, cfg Config, lines ...string) ([]string, *Log) {
	t.Helper()
	var out, logBuf bytes.Buffer
	log := NewLog(&logBuf)
	b := New(cfg, log)
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	if err := b.Serve(context.Background(), struct {
		io.Reader
		io.Writer
	}{in, &out}); err != nil {
		t.Fatal(err)
	}
	// Every received line is one JSON log line, in order.
	for i, l := range strings.Split(strings.TrimSpace(logBuf.String()), "\n") {
		var e LogEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != i+1 || e.Cmd != lines[i] {
			t.Fatalf("log line %d %q (%v): want command %q", i+1, l, err, lines[i])
		}
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"), log
}

func TestSwitchBoardProtocol(t *testing.T) {
	var in, want []string
	for _, tc := range []struct{ in, want string }{
		{"*IDN?", "TETRIS-HIL,SWB-2X2,EMU0001,1.0"},
		{"SW 2 CROSS", "OK"},
		{"SW? 1,2,3", "BAR,CROSS,BAR"},
		{"SW 1 CROSS,3 cross", "OK"},
		{"SW? 3", "CROSS"},
		{"*OPC?", "1"},
		{"SW 9 BAR", "ERR"},
		{"SW 1 OPEN", "ERR"},
		{"SW", "ERR"},
		{"FOO", "ERR"},
		{"SYST:ERR?", `-222,"Data out of range: channel 9"`},
		{"SYST:ERR?", `-224,"Illegal parameter value: OPEN"`},
		{"SYST:ERR?", `-102,"Syntax error: missing channel"`},
		{"SYST:ERR?", `-113,"Undefined header: FOO"`},
		{"SYST:ERR?", `0,"No error"`},
		{"SAFE", "OK"},
		{"SW? 1,2,3", "BAR,BAR,BAR"},
		{"XTAL 1 A ON", "ERR"},
	} {
		in, want = append(in, tc.in), append(want, tc.want)
	}
	got, _ := session(t, Config{Channels: []int{1, 2, 3}}, in...)
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("%q answered %q, want %q", in[i], at(got, i), want[i])
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(nothing)"
}

func TestCrystalBoardProtocol(t *testing.T) {
	in := []string{"*IDN?", "XTAL 0 A ON", "HV ON", "XTAL 0 A ON,1 B ON", "XTAL? 0,1", "XTAL 0 B ON", "XTAL? 0", "HV OFF", "SAFE", "XTAL? 0,1", "HV?", "SW 0 BAR"}
	want := []string{"TETRIS-HIL,XDB-KLTN,EMU0001,1.0", "ERR", "OK", "OK", "A,B", "OK", "AB", "OK", "OK", "OFF,OFF", "OFF", "ERR"}
	got, log := session(t, Config{Kind: CrystalBoard, Channels: []int{0, 1}}, in...)
	for i := range want {
		if at(got, i) != want[i] {
			t.Errorf("%q answered %q, want %q", in[i], at(got, i), want[i])
		}
	}
	// The board breaks no rule itself but reports breaches for tests.
	es := log.Entries()
	if es[5].Violation != "both crystals of channel 0 on" || !strings.Contains(es[7].Violation, "high voltage off with crystals on") {
		t.Errorf("violations %q, %q", es[5].Violation, es[7].Violation)
	}
}

func TestOSW22Protocol(t *testing.T) {
	in := []string{"*IDN?", "S?", "S 2", "S?", "S 1", "S?", "S 3"}
	want := []string{"THORLABS,OSW22-EMU,EMU0001,1.0", "1", "2", "1", "CMD_NOT_DEFINED"} // sets answer nothing
	got, _ := session(t, Config{Kind: OSW22}, in...)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("replies %q, want %q", got, want)
	}
}

func TestLatencyAndSettle(t *testing.T) {
	start := time.Now()
	session(t, Config{Channels: []int{1}, Latency: 5 * time.Millisecond, Settle: 20 * time.Millisecond}, "SW 1 CROSS", "*OPC?")
	// SW takes 5ms; *OPC? answers once it has settled, 20ms after SW was handled.
	if took := time.Since(start); took < 25*time.Millisecond || took > 150*time.Millisecond {
		t.Errorf("SW then *OPC? took %v, want about 25ms", took)
	}
}

func TestFaults(t *testing.T) {
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = "SW? 1"
	}
	got, log := session(t, Config{Channels: []int{1}, Garble: 0.2, Drop: 0.1, Seed: 9}, lines...)
	n := map[string]int{}
	for _, e := range log.Entries() {
		n[e.Fault]++
	}
	if n["dropped"] < 5 || n["garbled"] < 10 || len(got) != 200-n["dropped"] {
		t.Errorf("faults %v, %d replies", n, len(got))
	}
	for _, r := range got {
		if r != "BAR" && !strings.ContainsRune(r, '\ufffd') && !strings.Contains(r, "\xbf") {
			t.Errorf("reply %q is neither right nor garbled", r)
		}
	}
}

// stampWriter notes when each reply was written.
type stampWriter struct{ at []time.Time }

func (w *stampWriter) Write(p []byte) (int, error) {
	for range bytes.Count(p, []byte("\n")) {
		w.at = append(w.at, time.Now())
	}
	return len(p), nil
}

// TestModelTiming feeds lines that are all there at once (each arrives as soon as the board is
// done with the last) and checks when each reply goes out against the controller model worked by
// hand: T_r = 4u per request of B channels, T_w = 12u after a line's last request, u = 2.5ms (a
// reply may be late by 2u, half a request, for the scheduler of a loaded machine).
func TestModelTiming(t *testing.T) {
	const u = 2500 * time.Microsecond
	six := "SW 1 CROSS,2 CROSS,3 CROSS,4 CROSS,5 CROSS,6 CROSS"
	for _, tc := range []struct {
		name  string
		cfg   Config
		lines []string
		want  []time.Duration // reply times from the start
	}{
		// B = 4: six channels are two requests (8u); *OPC? answers at 8 + 12.
		{"B=4", Config{Batch: 4}, []string{six, "*OPC?"}, []time.Duration{8 * u, 20 * u}},
		// No limit: one request for the line; queries answer at once.
		{"whole line", Config{}, []string{six, "SW? 1", "*OPC?"}, []time.Duration{4 * u, 4 * u, 16 * u}},
		// Overlapping settles: the second line is handled at once after the first (8u), and
		// *OPC? waits for its settle (20u).
		{"overlap", Config{}, []string{"SW 1 CROSS", "SW 2 CROSS", "*OPC?"}, []time.Duration{4 * u, 8 * u, 20 * u}},
		// Serial settles: the second line waits until the first has settled (16u): 20, then 32.
		{"serial settles", Config{SerialSettle: true}, []string{"SW 1 CROSS", "SW 2 CROSS", "*OPC?"}, []time.Duration{4 * u, 20 * u, 32 * u}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A loaded machine stretches the board's sleeps, never shortens them: the first of
			// five tries within bounds counts.
			var bad []string
			for try := 0; try < 5; try++ {
				bad = nil
				cfg := tc.cfg
				cfg.Channels, cfg.Latency, cfg.Settle = []int{1, 2, 3, 4, 5, 6}, 4*u, 12*u
				b := New(cfg, nil)
				w := &stampWriter{}
				start := time.Now()
				b.start = start // the station's clock starts with the lines
				in := strings.NewReader(strings.Join(tc.lines, "\n") + "\n")
				if err := b.Serve(context.Background(), struct {
					io.Reader
					io.Writer
				}{in, w}); err != nil {
					t.Fatal(err)
				}
				if len(w.at) != len(tc.want) {
					t.Fatalf("%d replies, want %d", len(w.at), len(tc.want))
				}
				for i, at := range w.at {
					// Late by scheduling at most; a reply early by a request is a wrong model.
					if d := at.Sub(start); d < tc.want[i] || d > tc.want[i]+2*u {
						bad = append(bad, fmt.Sprintf("reply %d to %q at %v, want %v", i, tc.lines[i], d.Round(10*time.Microsecond), tc.want[i]))
					}
				}
				if len(bad) == 0 {
					return
				}
			}
			t.Error(strings.Join(bad, "; "))
		})
	}
}
