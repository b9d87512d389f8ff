package tetris

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// retimeBarrier replaces the planned times of s by those of barrier execution, the no-partial
// ablation: the planning matchings (Group) become rounds, run in order; round r starts when round
// r−1 has ended; if any switch the round uses must change state (on the crossbar: any transmitter
// must point somewhere new) every circuit of the round waits α_r, else none; the round ends with its
// longest circuit. Switches no circuit uses keep their state; all start in Bar. The matchings and
// paths are the ones Tetris planned, so the ablation isolates the barrier.
func retimeBarrier(s *schedules.Schedule) error {
	b, alpha := s.Params.BandwidthBytesPerSecond, s.Params.ReconfigSeconds
	var state []benes.State
	var dest []int
	if s.Fabric == schedules.Benes {
		f, err := benes.New(s.N)
		if err != nil {
			return fmt.Errorf("tetris: %w", err)
		}
		// Every path is one planWith built with NewPath on this fabric, so its traversals index
		// state without a check.
		state = make([]benes.State, f.NumSwitches())
	} else {
		dest = make([]int, s.Ports)
		for i := range dest {
			dest[i] = -1
		}
	}
	half := s.N / 2
	roundStart := 0.0
	for lo := 0; lo < len(s.Circuits); {
		hi := lo
		for hi < len(s.Circuits) && s.Circuits[hi].Group == s.Circuits[lo].Group {
			hi++
		}
		round := s.Circuits[lo:hi]
		wait := 0.0
		for _, c := range round {
			if dest != nil && dest[c.Src] != c.Dst {
				wait = alpha
			}
			for _, t := range c.Path.All() {
				if state[t.Stage*half+t.Switch] != t.State() {
					wait = alpha
				}
			}
		}
		end := roundStart
		for i := range round {
			c := &round[i]
			if dest != nil {
				dest[c.Src] = c.Dst
			}
			for _, t := range c.Path.All() {
				state[t.Stage*half+t.Switch] = t.State()
			}
			st := roundStart + wait
			en := st + float64(c.Bytes)/b
			c.PlannedStart, c.PlannedEnd = &st, &en
			end = max(end, en)
		}
		roundStart = end
		lo = hi
	}
	return nil
}
