package emulator_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// oracleChanges counts per switch the state changes of a Beneš schedule by the definition of
// Tetris §3.3, independently of the order the emulator derives: all switches start in Bar; in
// partial mode circuits take each switch in schedule order, in barrier mode round by round in
// group order, and a circuit (a round) whose traversal needs the other state changes it.
func oracleChanges(s *schedules.Schedule) map[[2]int]int {
	idx := make([]int, len(s.Circuits))
	for i := range idx {
		idx[i] = i
	}
	if s.Mode == schedules.Barrier {
		sort.SliceStable(idx, func(a, b int) bool { return s.Circuits[idx[a]].Group < s.Circuits[idx[b]].Group })
	}
	state := map[[2]int]int{}
	out := map[[2]int]int{}
	for _, i := range idx {
		for _, t := range s.Circuits[i].Path.All() {
			k := [2]int{t.Stage, t.Switch}
			if st := int(t.State()); state[k] != st {
				state[k] = st
				out[k]++
			}
		}
	}
	return out
}

// TestPerSwitchCountsSumToTotal: for every scheduler on every test matrix, in every run mode,
// the per-switch counts sum to StateChanges, list only switches that changed, in stage and index
// order, and equal the counts of Tetris §3.3's definition switch by switch.
func TestPerSwitchCountsSumToTotal(t *testing.T) {
	ctx := context.Background()
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(100e9), Reconfig: emulator.ParallelReconfig(10e-6)}
	for name, d := range testMatrices() {
		for _, algo := range schedules.Names() {
			t.Run(fmt.Sprintf("%s/%s", name, algo), func(t *testing.T) {
				sch, _ := schedules.Lookup(algo)
				s, err := sch.Schedule(ctx, d, schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6})
				if err != nil {
					t.Fatal(err)
				}
				r1, _, err := emulator.Run(ctx, s, d, cfg)
				if err != nil {
					t.Fatal(err)
				}
				r2, err := emulator.RunResult(ctx, s, d, cfg)
				if err != nil {
					t.Fatal(err)
				}
				r3, _, err := emulator.RunChecked(ctx, s, d, cfg)
				if err != nil {
					t.Fatal(err)
				}
				per, err := emulator.SwitchChanges(s, false)
				if err != nil {
					t.Fatal(err)
				}
				sum := 0
				for i, c := range per {
					if c.Count <= 0 {
						t.Fatalf("switch %d:%d listed with %d changes", c.Stage, c.Index, c.Count)
					}
					if i > 0 && (c.Stage < per[i-1].Stage || c.Stage == per[i-1].Stage && c.Index <= per[i-1].Index) {
						t.Fatalf("per-switch counts out of order at %d: %v", i, per)
					}
					sum += c.Count
				}
				for _, r := range []*emulator.Result{r1, r2, r3} {
					if sum != r.StateChanges {
						t.Fatalf("per-switch counts sum to %d, StateChanges %d", sum, r.StateChanges)
					}
				}
				if s.Fabric != schedules.Benes {
					return
				}
				want := oracleChanges(s)
				if len(want) != len(per) {
					t.Fatalf("%d switches changed by the definition, %d listed", len(want), len(per))
				}
				for _, c := range per {
					if w := want[[2]int{c.Stage, c.Index}]; w != c.Count {
						t.Fatalf("switch %d:%d: %d changes, the definition gives %d", c.Stage, c.Index, c.Count, w)
					}
				}
			})
		}
	}
}

func TestSwitchCountJSON(t *testing.T) {
	b, err := emulator.SwitchCount{Stage: -1, Index: 12, Count: 3}.MarshalJSON()
	if err != nil || string(b) != "[-1,12,3]" {
		t.Fatalf("got %s, %v; want [-1,12,3]", b, err)
	}
}
