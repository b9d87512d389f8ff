package emulator

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// TestUsedPorts checks that the bitset and the sorted list give the same ports: sparse and dense
// use, padding ports, every port used, and fabrics far larger than the schedule (where the
// bitset would be the larger).
func TestUsedPorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		n := 1 << (1 + rng.IntN(12))
		ports := n - rng.IntN(n/2+1)
		s := &schedules.Schedule{N: n, Ports: ports}
		nc := rng.IntN(3 * n)
		if trial%5 == 0 {
			nc = rng.IntN(4) // far fewer circuits than ports
		}
		span := n
		if trial%3 == 0 {
			span = 1 + rng.IntN(n) // only low ports
		}
		for range nc {
			s.Circuits = append(s.Circuits, schedules.Circuit{Src: rng.IntN(span), Dst: rng.IntN(span)})
		}
		if trial%7 == 0 {
			for p := range n { // every port
				s.Circuits = append(s.Circuits, schedules.Circuit{Src: p, Dst: n - 1 - p})
			}
		}
		got, want := usedPorts(s), sortedPorts(s)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("trial %d (N %d, Ports %d, %d circuits): usedPorts %v, sorted %v", trial, n, ports, len(s.Circuits), got, want)
		}
	}
}
