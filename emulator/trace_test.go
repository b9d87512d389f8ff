package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

func TestWriteChromeTrace(t *testing.T) {
	s := sched(schedules.Benes, schedules.Partial, 2,
		circuit(2, 0, 1, 5, 0, 0), circuit(2, 1, 0, 3, 0, 0), circuit(2, 0, 0, 4, 1, 0), circuit(2, 1, 1, 2, 1, 0))
	_, tl, err := Run(context.Background(), s, nil, Config{Transfer: BandwidthModel(1), Reconfig: ParallelReconfig(10)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteChromeTrace(&buf, s, tl); err != nil {
		t.Fatal(err)
	}
	var f traceFile
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	type slice struct {
		pid, tid int
		name     string
		from, to float64
	}
	var got []slice
	tracks := map[[2]int]string{}
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "X":
			got = append(got, slice{e.Pid, e.Tid, e.Name, e.Ts, e.Ts + *e.Dur})
		case "M":
			if e.Name == "thread_name" {
				tracks[[2]int{e.Pid, e.Tid}] = e.Args["name"].(string)
			}
		}
	}
	// Worked by hand (TestHandWorkedTimelines, 2×2 partial parallel), in µs (1 s = 1e6 µs).
	want := []slice{
		{pidTx, 0, "reconfig 0→1", 0, 10e6}, {pidTx, 0, "0→1", 10e6, 15e6},
		{pidSwitch, 0, "bar→cross", 0, 10e6}, {pidSwitch, 0, "cross", 10e6, 15e6},
		{pidSwitch, 0, "cross→bar", 15e6, 25e6}, {pidSwitch, 0, "bar", 25e6, 29e6},
		{pidRx, 1, "1→1", 25e6, 27e6},
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("no slice %+v in %+v", w, got)
		}
	}
	for _, tr := range []struct {
		pid, tid int
		name     string
	}{{pidTx, 0, "Tx0"}, {pidTx, 1, "Tx1"}, {pidRx, 0, "Rx0"}, {pidRx, 1, "Rx1"}, {pidSwitch, 0, "stage 0 switch 0"}} {
		if tracks[[2]int{tr.pid, tr.tid}] != tr.name {
			t.Errorf("track (%d, %d) is %q, want %q", tr.pid, tr.tid, tracks[[2]int{tr.pid, tr.tid}], tr.name)
		}
	}
	// 4 circuits × (Tx + Rx) transmit slices, 4 × 2 reconfig slices, 4 switch slices.
	if len(got) != 8+8+4 {
		t.Errorf("%d slices, want 20", len(got))
	}
}
