package schedules_test

import (
	"runtime"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// barrierTimeline executes a barrier schedule by hand, rounds one after another in group order
// (the circuits are in that order), as the emulator does under parallel reconfiguration: round r
// starts when round r−1 has ended, every switch its circuits need in another state changes over
// [start, start + alphaR), and then every circuit transmits its bytes at bandwidth b.
func barrierTimeline(s *schedules.Schedule, b, alphaR float64) *schedules.Timeline {
	tl := &schedules.Timeline{}
	f, _ := s.BenesFabric()
	state := make([]benes.State, f.NumSwitches())
	start := 0.0
	for lo := 0; lo < len(s.Circuits); {
		hi := lo
		for hi < len(s.Circuits) && s.Circuits[hi].Group == s.Circuits[lo].Group {
			hi++
		}
		tx := start
		for _, c := range s.Circuits[lo:hi] {
			for _, t := range c.Path.All() {
				if id := f.SwitchID(t.Stage, t.Switch); state[id] != t.State() {
					tl.SwitchChanges = append(tl.SwitchChanges, schedules.SwitchChange{Stage: int32(t.Stage), Switch: int32(t.Switch),
						From: state[id], To: t.State(), Start: start, End: start + alphaR})
					state[id] = t.State()
					tx = start + alphaR
				}
			}
		}
		end := tx
		for i := lo; i < hi; i++ {
			e := tx + float64(s.Circuits[i].Bytes)/b
			tl.Circuits = append(tl.Circuits, schedules.CircuitTiming{Circuit: i, Ready: start, PathReady: start,
				ReconfigStart: start, TransmitStart: tx, End: e})
			end = max(end, e)
		}
		start, lo = end, hi
	}
	return tl
}

// allocated is the number of bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The verifier's memory is the demand, the fabric and a few bytes per circuit (Verify: at most a
// 4-byte index; VerifyTimeline: two, and one per switch change), not maps or interval lists per
// round and resource (over 3 KB per circuit before). Not a timing test: it counts bytes.
func TestVerifyMemoryIsLinear(t *testing.T) {
	n := 32
	s, d := denseBvNSinkhorn(t, n)
	tl := barrierTimeline(s, 1e11, 1e-5)
	c, ch := uint64(len(s.Circuits)), uint64(len(tl.SwitchChanges))
	const slack = 1 << 20 // per-port, per-lane and per-switch tables, and the demand's sums
	var vs []schedules.Violation
	if got, limit := allocated(func() { vs = schedules.Verify(s, d) }), 4*c+slack; got > limit {
		t.Errorf("Verify of %d circuits allocates %d bytes, above %d", c, got, limit)
	} else {
		t.Logf("Verify: %d circuits, %d bytes", c, got)
	}
	if len(vs) != 0 {
		t.Fatalf("the bvn-sinkhorn schedule fails: %v", schedules.ViolationsError(vs))
	}
	if got, limit := allocated(func() { vs = schedules.VerifyTimeline(s, tl) }), 8*c+4*ch+slack; got > limit {
		t.Errorf("VerifyTimeline of %d circuits and %d switch changes allocates %d bytes, above %d", c, ch, got, limit)
	} else {
		t.Logf("VerifyTimeline: %d circuits, %d changes, %d bytes", c, ch, got)
	}
	if len(vs) != 0 {
		t.Fatalf("the hand-executed timeline fails: %v", schedules.ViolationsError(vs))
	}
	// The timeline is a real check: a change that ends after its round's circuits start is caught.
	tl.SwitchChanges[len(tl.SwitchChanges)/2].End += 1e-6
	if vs := schedules.VerifyTimeline(s, tl); len(vs) == 0 || vs[0].Kind != schedules.SwitchUnderLiveCircuit {
		t.Fatalf("a change under live circuits: %v, want it reported", schedules.ViolationsError(vs))
	}
}
