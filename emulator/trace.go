package emulator

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/tetris-hil/tetris-hil/internal/jsonw"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// The Chrome trace-event format is the JSON Perfetto and chrome://tracing open: a traceEvents
// list of "X" records (a complete slice with a start and a duration) and "M" records (metadata
// that names a process or a thread), times in microseconds. WriteChromeTrace writes the text
// encoding/json's Encoder gave for the list of
//
//	{name, ph, ts, dur (slices only), pid, tid, cat (slices only), args (if any)}
//
// records (compact, one newline at the end), event by event.

// Process ids of the three groups of tracks.
const (
	pidTx = 1 + iota
	pidRx
	pidSwitch
)

// WriteChromeTrace writes tl as Chrome trace-event JSON with one track per transmitter, per
// receiver and per switch that changes: circuits appear on their transmitter and receiver tracks
// (their wait for reconfiguration as a separate "reconfig" slice), switch tracks show each
// transition and the state held between transitions.
//
// Events are written as they are encoded, never held: beyond the schedule and timeline it needs
// the sets of used ports and at most two int32 per switch change (the changes' order by switch
// track, and the counting sort's table).
// Every time is checked before anything is written, so a timeline with a time that cannot be
// encoded (NaN or infinite, or overflowing in microseconds) is refused, with the error
// encoding/json gives, leaving w untouched.
func WriteChromeTrace(w io.Writer, s *schedules.Schedule, tl *schedules.Timeline) error {
	if len(tl.Circuits) != len(s.Circuits) {
		return fmt.Errorf("chrome trace: timeline has %d circuits, schedule %d", len(tl.Circuits), len(s.Circuits))
	}
	usedTx, usedRx := map[int]bool{}, map[int]bool{}
	for _, ct := range tl.Circuits {
		if ct.Circuit < 0 || ct.Circuit >= len(s.Circuits) {
			return fmt.Errorf("chrome trace: timeline names circuit %d of %d", ct.Circuit, len(s.Circuits))
		}
		c := &s.Circuits[ct.Circuit]
		usedTx[c.Src], usedRx[c.Dst] = true, true
	}
	order, err := switchTrackOrder(s, tl.SwitchChanges)
	if err != nil {
		return err
	}
	t := &traceWriter{s: s, tl: tl, order: order, txs: sortedKeys(usedTx), rxs: sortedKeys(usedRx)}
	// First pass: only the times, for the first one encoding/json would refuse (kept in the
	// stream's Err; nothing is appended).
	t.check, t.Stream = true, &jsonw.Stream{}
	t.events()
	if t.Err != nil {
		return t.Err
	}
	t.check = false
	t.Stream = jsonw.NewStream(w)
	t.Str(`{"traceEvents":[`)
	t.events()
	t.Str(`],"displayTimeUnit":"ns"}` + "\n")
	t.Flush()
	return t.Stream.Err
}

// switchTrackOrder returns the indices of changes grouped by switch track (tid stage·(n/2)+switch,
// ascending) and in timeline order within a track: a counting sort where the tracks' ids span
// little more than the changes (every timeline the emulator writes, Beneš or crossbar), a stable
// sort of the indices otherwise.
func switchTrackOrder(s *schedules.Schedule, changes []schedules.SwitchChange) ([]int32, error) {
	if len(changes) > math.MaxInt32 {
		return nil, fmt.Errorf("chrome trace: %d switch changes; at most %d can be written", len(changes), math.MaxInt32)
	}
	if len(changes) == 0 {
		return nil, nil
	}
	half := s.N / 2
	lo, hi := trackID(&changes[0], half), trackID(&changes[0], half)
	for i := range changes {
		v := trackID(&changes[i], half)
		lo, hi = min(lo, v), max(hi, v)
	}
	order := make([]int32, len(changes))
	if span := uint64(hi - lo); span < uint64(len(changes))+1<<16 {
		start := make([]int32, span+2)
		for i := range changes {
			start[trackID(&changes[i], half)-lo+1]++
		}
		for k := 1; k < len(start); k++ {
			start[k] += start[k-1]
		}
		for i := range changes {
			k := trackID(&changes[i], half) - lo
			order[start[k]] = int32(i)
			start[k]++
		}
		return order, nil
	}
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(trackID(&changes[a], half), trackID(&changes[b], half)) })
	return order, nil
}

// traceWriter walks the trace's events in their order. In check mode it only computes the times
// and keeps the first that cannot be encoded in Err; otherwise it appends each event's text to
// the stream.
type traceWriter struct {
	s        *schedules.Schedule
	tl       *schedules.Timeline
	order    []int32
	txs, rxs []int
	check    bool
	n        int    // events written, for the commas between them
	num      []byte // scratch for the text of an event's times
	*jsonw.Stream
}

const us = 1e6 // microseconds per second, the trace's unit

// events walks the trace: the three process names; per circuit in timeline order, its slices on
// its transmitter then its receiver track; the transmitters' and receivers' thread names in port
// order; per switch track in id order its name, then its held states and transitions.
func (t *traceWriter) events() {
	s, tl := t.s, t.tl
	if !t.check {
		t.meta(pidTx, 0, "process_name", "transmitters")
		t.meta(pidRx, 0, "process_name", "receivers")
		t.meta(pidSwitch, 0, "process_name", "switches")
	}
	for i := range tl.Circuits {
		ct := &tl.Circuits[i]
		c := &s.Circuits[ct.Circuit]
		if t.check {
			// Both tracks carry the same times; the transmitter's come first.
			if ct.ReconfigStart < ct.TransmitStart {
				t.checkSpan(max(ct.ReconfigStart, ct.PathReady), ct.TransmitStart)
			}
			t.checkSpan(ct.TransmitStart, ct.End)
			t.checkTime(ct.PathReady * us)
			t.checkTime(ct.Ready * us)
			if t.Err != nil {
				return
			}
			continue
		}
		// Both tracks carry the same times: each is formatted once, into num, and copied.
		reconfig := ct.ReconfigStart < ct.TransmitStart
		var cut [6]int
		num := t.num[:0]
		if reconfig {
			from := max(ct.ReconfigStart, ct.PathReady)
			num = jsonw.AppendFloat(num, from*us)
			cut[0] = len(num)
			num = jsonw.AppendFloat(num, (ct.TransmitStart-from)*us)
			cut[1] = len(num)
		}
		num = jsonw.AppendFloat(num, ct.TransmitStart*us)
		cut[2] = len(num)
		num = jsonw.AppendFloat(num, (ct.End-ct.TransmitStart)*us)
		cut[3] = len(num)
		num = jsonw.AppendFloat(num, ct.PathReady*us)
		cut[4] = len(num)
		num = jsonw.AppendFloat(num, ct.Ready*us)
		cut[5] = len(num)
		t.num = num
		for _, pt := range [2]struct{ pid, tid int }{{pidTx, c.Src}, {pidRx, c.Dst}} {
			if reconfig {
				t.begin("reconfig ")
				t.circuitName(c)
				t.span(num[:cut[0]], num[cut[0]:cut[1]], pt.pid, pt.tid, "reconfig")
				t.Str("}")
			}
			t.begin("")
			t.circuitName(c)
			t.span(num[cut[1]:cut[2]], num[cut[2]:cut[3]], pt.pid, pt.tid, "transmit")
			// args, a map in the old encoding: its keys in sorted order.
			t.Str(`,"args":{"bytes":`)
			t.Int64(c.Bytes)
			t.Str(`,"circuit":`)
			t.Int(ct.Circuit)
			t.Str(`,"group":`)
			t.Int(c.Group)
			t.Str(`,"path_ready_us":`)
			t.B = append(t.B, num[cut[3]:cut[4]]...)
			t.Str(`,"ready_us":`)
			t.B = append(t.B, num[cut[4]:cut[5]]...)
			t.Str("}}")
		}
		t.MaybeFlush()
	}
	if !t.check {
		for _, p := range t.txs {
			t.meta(pidTx, p, "thread_name", fmt.Sprintf("Tx%d", p))
		}
		for _, p := range t.rxs {
			t.meta(pidRx, p, "thread_name", fmt.Sprintf("Rx%d", p))
		}
	}
	end := tl.Completion()
	half := s.N / 2
	for k := 0; k < len(t.order); {
		first := &tl.SwitchChanges[t.order[k]]
		id := trackID(first, half)
		if !t.check {
			t.meta(pidSwitch, id, "thread_name", fmt.Sprintf("stage %d switch %d", first.Stage, first.Switch))
		}
		held := 0.0
		var last *schedules.SwitchChange
		for ; k < len(t.order); k++ {
			sc := &tl.SwitchChanges[t.order[k]]
			if trackID(sc, half) != id {
				break
			}
			if sc.Start > held {
				t.switchSlice(id, "state", sc.From.String(), "", held, sc.Start)
			}
			t.switchSlice(id, "reconfig", sc.From.String(), sc.To.String(), sc.Start, sc.End)
			held, last = sc.End, sc
			if t.check {
				if t.Err != nil {
					return
				}
			} else {
				t.MaybeFlush()
			}
		}
		if end > held {
			t.switchSlice(id, "state", last.To.String(), "", held, end)
		}
	}
}

// checkTime keeps the error encoding/json gives for v if it is the first that cannot be encoded.
func (t *traceWriter) checkTime(v float64) {
	if t.Err == nil {
		t.Err = jsonw.CheckFloat(v)
	}
}

// checkSpan checks a slice's ts and dur.
func (t *traceWriter) checkSpan(from, to float64) {
	t.checkTime(from * us)
	t.checkTime((to - from) * us)
}

// begin starts an event: the comma before all but the first, and the opening of its name, which
// goes on with prefix.
func (t *traceWriter) begin(prefix string) {
	if t.n > 0 {
		t.Str(",")
	}
	t.n++
	t.Str(`{"name":"`)
	t.Str(prefix)
}

// circuitName appends "src→dst". Decimal digits, '-' and the arrow (valid UTF-8, not one of the
// line separators encoding/json escapes) need no escaping, so the text is what Marshal gave;
// the same holds for every name and category this file writes.
func (t *traceWriter) circuitName(c *schedules.Circuit) {
	t.Int(c.Src)
	t.Str("→")
	t.Int(c.Dst)
}

// span closes the name and appends an "X" slice's fields from ph to cat, ts and dur given as
// their text.
func (t *traceWriter) span(ts, dur []byte, pid, tid int, cat string) {
	t.Str(`","ph":"X","ts":`)
	t.B = append(t.B, ts...)
	t.Str(`,"dur":`)
	t.B = append(t.B, dur...)
	t.Str(`,"pid":`)
	t.Int(pid)
	t.Str(`,"tid":`)
	t.Int(tid)
	t.Str(`,"cat":"`)
	t.Str(cat)
	t.Str(`"`)
}

// switchSlice is one slice on a switch track, named from or from→to.
func (t *traceWriter) switchSlice(id int, cat, from, to string, start, stop float64) {
	if t.check {
		t.checkSpan(start, stop)
		return
	}
	t.begin(from)
	if to != "" {
		t.Str("→")
		t.Str(to)
	}
	num := jsonw.AppendFloat(t.num[:0], start*us)
	cut := len(num)
	t.num = jsonw.AppendFloat(num, (stop-start)*us)
	t.span(t.num[:cut], t.num[cut:], pidSwitch, id, cat)
	t.Str("}")
}

// meta is an "M" record naming a process or thread (ts 0, no dur or cat).
func (t *traceWriter) meta(pid, tid int, what, name string) {
	t.begin(what)
	t.Str(`","ph":"M","ts":0,"pid":`)
	t.Int(pid)
	t.Str(`,"tid":`)
	t.Int(tid)
	t.Str(`,"args":{"name":"`)
	t.Str(name)
	t.Str(`"}}`)
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// trackID is the trace's thread of a switch change's switch: its dense id (stage·half + switch,
// half the fabric's ports), the order in which switchTrackOrder sorts the changes.
func trackID(sc *schedules.SwitchChange, half int) int { return int(sc.Stage)*half + int(sc.Switch) }
