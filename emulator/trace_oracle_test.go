package emulator

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// The Chrome trace writer as it was before it streamed, kept verbatim as the oracle that
// WriteChromeTrace's bytes and errors are held to: it built every event (a map of args per
// slice) and marshalled them at once.

// traceEvent is one record of the Chrome trace-event format (the JSON Perfetto and
// chrome://tracing open): "X" is a complete slice with a start and a duration, "M" metadata
// that names a process or a thread. Times are microseconds.
type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Cat  string         `json:"cat,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

type traceFile struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
}

func oracleWriteChromeTrace(w io.Writer, s *schedules.Schedule, tl *schedules.Timeline) error {
	if len(tl.Circuits) != len(s.Circuits) {
		return fmt.Errorf("chrome trace: timeline has %d circuits, schedule %d", len(tl.Circuits), len(s.Circuits))
	}
	const us = 1e6
	var evs []traceEvent
	meta := func(pid, tid int, what, name string) {
		evs = append(evs, traceEvent{Name: what, Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": name}})
	}
	slice := func(pid, tid int, cat, name string, from, to float64, args map[string]any) {
		d := (to - from) * us
		evs = append(evs, traceEvent{Name: name, Ph: "X", Ts: from * us, Dur: &d, Pid: pid, Tid: tid, Cat: cat, Args: args})
	}
	meta(pidTx, 0, "process_name", "transmitters")
	meta(pidRx, 0, "process_name", "receivers")
	meta(pidSwitch, 0, "process_name", "switches")
	usedTx, usedRx := map[int]bool{}, map[int]bool{}
	for _, ct := range tl.Circuits {
		if ct.Circuit < 0 || ct.Circuit >= len(s.Circuits) {
			return fmt.Errorf("chrome trace: timeline names circuit %d of %d", ct.Circuit, len(s.Circuits))
		}
		c := s.Circuits[ct.Circuit]
		usedTx[c.Src], usedRx[c.Dst] = true, true
		name := fmt.Sprintf("%d→%d", c.Src, c.Dst)
		args := map[string]any{"circuit": ct.Circuit, "bytes": c.Bytes, "group": c.Group,
			"ready_us": ct.Ready * us, "path_ready_us": ct.PathReady * us}
		for _, pt := range []struct{ pid, tid int }{{pidTx, c.Src}, {pidRx, c.Dst}} {
			if ct.ReconfigStart < ct.TransmitStart {
				slice(pt.pid, pt.tid, "reconfig", "reconfig "+name, max(ct.ReconfigStart, ct.PathReady), ct.TransmitStart, nil)
			}
			slice(pt.pid, pt.tid, "transmit", name, ct.TransmitStart, ct.End, args)
		}
	}
	for _, p := range sortedKeys(usedTx) {
		meta(pidTx, p, "thread_name", fmt.Sprintf("Tx%d", p))
	}
	for _, p := range sortedKeys(usedRx) {
		meta(pidRx, p, "thread_name", fmt.Sprintf("Rx%d", p))
	}
	// Switch tracks: tid is stage·(n/2)+switch, the dense switch id.
	end := tl.Completion()
	bySwitch := map[int][]schedules.SwitchChange{}
	for _, sc := range tl.SwitchChanges {
		id := int(sc.Stage)*(s.N/2) + int(sc.Switch)
		bySwitch[id] = append(bySwitch[id], sc)
	}
	for _, id := range sortedKeys(bySwitch) {
		scs := bySwitch[id]
		meta(pidSwitch, id, "thread_name", fmt.Sprintf("stage %d switch %d", scs[0].Stage, scs[0].Switch))
		held := 0.0
		for _, sc := range scs {
			if sc.Start > held {
				slice(pidSwitch, id, "state", sc.From.String(), held, sc.Start, nil)
			}
			slice(pidSwitch, id, "reconfig", sc.From.String()+"→"+sc.To.String(), sc.Start, sc.End, nil)
			held = sc.End
		}
		if last := scs[len(scs)-1]; end > held {
			slice(pidSwitch, id, "state", last.To.String(), held, end, nil)
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(traceFile{TraceEvents: evs, DisplayTimeUnit: "ns"})
}
