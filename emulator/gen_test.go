package emulator

import (
	"math/rand/v2"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// randomSchedule builds a valid schedule from rounds random partial permutations on n ports (a
// power of two), without depending on any scheduler or router. Each circuit takes a random path.
// Partial mode may use any path (the order serialises conflicts); in barrier mode a circuit goes
// to the first round, from its own on, where no endpoint, lane or switch state clashes, so rounds
// stay conflict-free. keep is the probability that a pair of a permutation is used.
func randomSchedule(rng *rand.Rand, n, rounds int, fabric schedules.FabricKind, mode schedules.Mode, keep float64) *schedules.Schedule {
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "random", N: n, Ports: n,
		Fabric: fabric, Mode: mode, Params: schedules.Params{BandwidthBytesPerSecond: 1e11, ReconfigSeconds: 1e-6}}
	var f *benes.Fabric
	if fabric == schedules.Benes {
		f, _ = benes.New(n)
	}
	type use struct {
		round int
		what  [4]int
	}
	taken := map[use]int{} // endpoint or lane → 1; switch → 1 + state
	fits := func(r int, c schedules.Circuit) bool {
		if taken[use{r, [4]int{0, c.Src}}] != 0 || taken[use{r, [4]int{1, c.Dst}}] != 0 {
			return false
		}
		for _, t := range c.Path.All() {
			if taken[use{r, [4]int{2, t.Stage, t.Switch, t.In}}] != 0 || taken[use{r, [4]int{3, t.Stage, t.Switch, t.Out}}] != 0 {
				return false
			}
			if st := taken[use{r, [4]int{4, t.Stage, t.Switch}}]; st != 0 && st != 1+int(t.State()) {
				return false
			}
		}
		return true
	}
	take := func(r int, c schedules.Circuit) {
		taken[use{r, [4]int{0, c.Src}}], taken[use{r, [4]int{1, c.Dst}}] = 1, 1
		for _, t := range c.Path.All() {
			taken[use{r, [4]int{2, t.Stage, t.Switch, t.In}}] = 1
			taken[use{r, [4]int{3, t.Stage, t.Switch, t.Out}}] = 1
			taken[use{r, [4]int{4, t.Stage, t.Switch}}] = 1 + int(t.State())
		}
	}
	for g := 0; g < rounds; g++ {
		for src, dst := range rng.Perm(n) {
			if rng.Float64() >= keep {
				continue
			}
			c := schedules.Circuit{Src: src, Dst: dst, Bytes: 1 + rng.Int64N(1<<20), Group: g}
			if f != nil {
				c.Path = f.NewPath(src, dst, rng.Uint32N(uint32(n/2)))
			}
			if mode == schedules.Barrier {
				for !fits(c.Group, c) {
					c.Group++
				}
				take(c.Group, c)
			}
			s.Circuits = append(s.Circuits, c)
		}
	}
	if mode == schedules.Barrier {
		for g := 0; g < s.Groups(); g++ {
			if rng.IntN(2) == 0 {
				s.Rounds = append(s.Rounds, schedules.Round{Group: g, PlannedDuration: float64(rng.IntN(1<<20)) / 1e11})
			}
		}
	}
	return s
}
