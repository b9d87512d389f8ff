package emulator

import (
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// SwitchCount is how often one switch changed state in a run: [stage, index, count] in JSON.
// On a crossbar Stage is −1 and Index the transmitter's port (its re-pointings), as in Epoch.
type SwitchCount struct {
	Stage, Index, Count int
}

// MarshalJSON writes the count as [stage, index, count].
func (c SwitchCount) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '[')
	b = appendInt(b, c.Stage)
	b = append(b, ',')
	b = appendInt(b, c.Index)
	b = append(b, ',')
	b = appendInt(b, c.Count)
	return append(b, ']'), nil
}

// UnmarshalJSON reads [stage, index, count].
func (c *SwitchCount) UnmarshalJSON(b []byte) error {
	var v []int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(v) != 3 {
		return fmt.Errorf("switch count %s: want [stage, index, count]", jsonerr.Shorten(string(b)))
	}
	c.Stage, c.Index, c.Count = v[0], v[1], v[2]
	return nil
}

func appendInt(b []byte, v int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// SwitchChanges is how often each switch changes state when s executes: the epochs of its
// dependency order (the same order Run walks), counted switch by switch, so that the counts sum
// to Run's Result.StateChanges. Only switches that change are listed, by stage then index; on a
// crossbar the "switches" are the transmitters (Stage −1). Switch wear (Tetris §5) is per
// switch: a MEMS switch's rated cycle count is spent by its own changes. The paths are trusted
// as Config.PathsChecked says.
func SwitchChanges(s *schedules.Schedule, pathsChecked bool) ([]SwitchCount, error) {
	sc := getScratch()
	defer sc.release()
	// Pooled, as the run derives it: the epochs are all the count needs, and the exported form
	// (predecessor and successor lists, an Epoch record per change) would hold several times
	// the schedule's own memory on a barrier schedule of millions of circuits.
	o, err := newOrder(s, sc, true, pathsChecked)
	if err != nil {
		return nil, err
	}
	return perSwitch(o), nil
}

// perSwitch counts the order's epochs switch by switch: every epoch is one state change of one
// switch (or one re-pointing of a crossbar transmitter), so the counts sum to NumEpochs, the
// run's StateChanges. Only switches that changed are listed, by stage then index. Switch wear
// (Tetris §5) is per switch: a MEMS switch's rated cycle count is spent by its own changes.
func perSwitch(o *Order) []SwitchCount {
	ne := o.numEpochs()
	if ne == 0 {
		return []SwitchCount{}
	}
	// Dense counts, row stage+1 (a crossbar's −1 is row 0) of n entries: a barrier schedule of
	// a large demand has tens of millions of epochs.
	n := max(o.n, 2)
	stages := 2*bits.Len(uint(n-1)) - 1
	counts := make([]int, (stages+1)*n)
	for i := range ne {
		e := o.Epoch(i)
		counts[(e.Stage+1)*n+e.Switch]++
	}
	changed := 0
	for _, c := range counts {
		if c > 0 {
			changed++
		}
	}
	out := make([]SwitchCount, 0, changed)
	for id, c := range counts {
		if c > 0 {
			out = append(out, SwitchCount{Stage: id/n - 1, Index: id % n, Count: c})
		}
	}
	return out
}

// MostChanged is the switch with the most changes (the first by stage and index on a tie), and
// false when nothing changed.
func MostChanged(cs []SwitchCount) (SwitchCount, bool) {
	best, ok := SwitchCount{}, false
	for _, c := range cs {
		if !ok || c.Count > best.Count {
			best, ok = c, true
		}
	}
	return best, ok
}
