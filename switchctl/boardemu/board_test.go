package boardemu

import (
	"bytes"
	"context"
	"encoding/json"
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
	// SW takes 5ms; *OPC? its own 5ms, then waits for the settle, 20ms after SW was handled.
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
