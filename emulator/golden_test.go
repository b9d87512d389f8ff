package emulator_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// TestGoldenRuns pins what the emulator computes, byte for byte, on a fixed corpus: random
// schedules on both fabrics in both modes up to n = 128, every registered scheduler's schedules
// at n = 8..32, barrier schedules whose groups are out of order or missing, and broken schedules
// (their error text). Per case it records a SHA-256 of the JSON of Run's result and timeline,
// RunResult's result, and the dependency order NewOrder exposes (epochs, rounds and every
// per-circuit and per-epoch list), under two reconfiguration models. A speed-up of the order or
// the walk must leave testdata/golden_runs.txt unchanged.
func TestGoldenRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("golden corpus: not in -short")
	}
	var out strings.Builder
	for _, gc := range goldenCases(t) {
		fmt.Fprintf(&out, "%s %s\n", gc.name, goldenDigest(t, gc.s, gc.d))
	}
	goldenfile.Check(t, "testdata/golden_runs.txt", []byte(out.String()))
}

type goldenCase struct {
	name string
	s    *schedules.Schedule
	d    *schedules.Demand
}

func goldenCases(t *testing.T) []goldenCase {
	var cs []goldenCase
	for _, n := range []int{2, 4, 8, 16, 32, 64, 128} {
		for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
			for _, mode := range []schedules.Mode{schedules.Partial, schedules.Barrier} {
				for _, keep := range []float64{1, 0.4} {
					if mode == schedules.Barrier && n > 64 {
						continue // the generator's conflict check is slow; n ≤ 64 covers barrier mode
					}
					rng := rand.New(rand.NewPCG(uint64(n), uint64(10*keep)))
					s := goldenRandom(rng, n, n, fabric, mode, keep)
					cs = append(cs, goldenCase{name: fmt.Sprintf("random/n=%d/%s/%s/keep=%g", n, fabric, mode, keep), s: s})
					if mode == schedules.Barrier {
						// Groups out of schedule order, a gap, and a round that has no circuits.
						r := cloneSchedule(s)
						slices.Reverse(r.Circuits)
						for i := range r.Circuits {
							r.Circuits[i].Group *= 2
						}
						r.Rounds = append(r.Rounds, schedules.Round{Group: 2*s.Groups() + 3, PlannedDuration: 1e-6}, schedules.Round{Group: 1, PlannedDuration: 2e-6})
						cs = append(cs, goldenCase{name: fmt.Sprintf("reversed/n=%d/%s/keep=%g", n, fabric, keep), s: r})
					}
				}
			}
		}
	}
	// Equal sizes: many circuits end at the same instant, so the order in which simultaneous
	// events are handled shows in the timelines.
	for _, n := range []int{4, 8, 16, 64} {
		for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
			for _, mode := range []schedules.Mode{schedules.Partial, schedules.Barrier} {
				s := goldenRandom(rand.New(rand.NewPCG(uint64(n), 77)), n, n, fabric, mode, 1)
				for i := range s.Circuits {
					s.Circuits[i].Bytes = 1 << 20
				}
				cs = append(cs, goldenCase{name: fmt.Sprintf("equal/n=%d/%s/%s", n, fabric, mode), s: s})
			}
		}
	}
	for _, n := range []int{8, 16, 32} {
		rng := rand.New(rand.NewPCG(7, uint64(n)))
		dense, sparse, uniform := schedules.NewDemand(n), schedules.NewDemand(n), schedules.NewDemand(n)
		for i := range n {
			for j := range n {
				uniform.Bytes[i][j] = 1 << 20
				dense.Bytes[i][j] = rng.Int64N(1 << 22)
				if rng.IntN(4) == 0 {
					sparse.Bytes[i][j] = 1 + rng.Int64N(1<<22)
				}
			}
		}
		for _, name := range schedules.Names() {
			for _, dd := range []struct {
				name string
				d    *schedules.Demand
			}{{"dense", dense}, {"sparse", sparse}, {"uniform", uniform}} {
				dname, d := dd.name, dd.d
				for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
					sch, _ := schedules.Lookup(name)
					s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6, Fabric: fabric})
					if err != nil {
						t.Fatalf("%s on %s n=%d: %v", name, dname, n, err)
					}
					cs = append(cs, goldenCase{name: fmt.Sprintf("%s/n=%d/%s/%s", name, n, dname, fabric), s: s, d: d})
				}
			}
		}
	}
	// Broken schedules: each error is part of the golden output.
	base := goldenRandom(rand.New(rand.NewPCG(9, 9)), 16, 4, schedules.Benes, schedules.Partial, 1)
	bar := goldenRandom(rand.New(rand.NewPCG(9, 10)), 16, 4, schedules.Benes, schedules.Barrier, 1)
	xbar := goldenRandom(rand.New(rand.NewPCG(9, 11)), 16, 4, schedules.Crossbar, schedules.Partial, 1)
	broken := []struct {
		name   string
		from   *schedules.Schedule
		break_ func(s *schedules.Schedule)
	}{
		{"stage", base, func(s *schedules.Schedule) { hop(s, 5, 2, func(t *benes.Traversal) { t.Stage++ }) }},
		{"switch", base, func(s *schedules.Schedule) { hop(s, 7, 3, func(t *benes.Traversal) { t.Switch ^= 1 }) }},
		{"inlane", base, func(s *schedules.Schedule) { hop(s, 9, 1, func(t *benes.Traversal) { t.In ^= 1 }) }},
		{"outlane", base, func(s *schedules.Schedule) { hop(s, 11, 6, func(t *benes.Traversal) { t.Out = 2 }) }},
		{"lastout", base, func(s *schedules.Schedule) { hop(s, 13, 6, func(t *benes.Traversal) { t.Out ^= 1 }) }},
		{"short", base, func(s *schedules.Schedule) { s.Circuits[3].Path = benes.PathOf(s.Circuits[3].Path.Traversals()[:4]) }},
		{"nopath", base, func(s *schedules.Schedule) { s.Circuits[30].Path = benes.Path{} }},
		{"src", base, func(s *schedules.Schedule) { s.Circuits[20].Src = 16 }},
		{"dst", base, func(s *schedules.Schedule) { s.Circuits[21].Dst = -1 }},
		{"bytes", base, func(s *schedules.Schedule) { s.Circuits[22].Bytes = -5 }},
		{"group", base, func(s *schedules.Schedule) { s.Circuits[23].Group = -1 }},
		{"version", base, func(s *schedules.Schedule) { s.Version = 7 }},
		{"clash", bar, func(s *schedules.Schedule) {
			// A second circuit in circuit 0's round that needs its first switch in the other state.
			a, f := s.Circuits[0], mustFabric(16)
			c := &s.Circuits[1]
			c.Group, c.Src = a.Group, a.Src^1
			for dst := range 16 {
				if p := f.NewPath(c.Src, dst, 0); p.At(0).State() != a.Path.At(0).State() {
					c.Dst, c.Path = dst, p
					break
				}
			}
		}},
		{"duration", bar, func(s *schedules.Schedule) {
			s.Rounds = append(s.Rounds, schedules.Round{Group: 0, PlannedDuration: -1})
		}},
		{"xbarpath", xbar, func(s *schedules.Schedule) {
			f, _ := benes.New(16)
			s.Circuits[4].Path = f.NewPath(s.Circuits[4].Src, s.Circuits[4].Dst, 0)
		}},
	}
	for _, b := range broken {
		s := cloneSchedule(b.from)
		b.break_(s)
		cs = append(cs, goldenCase{name: "broken/" + b.name, s: s})
	}
	return cs
}

// goldenRandom is a random valid schedule as the package's internal randomSchedule makes one
// (rounds random partial permutations with random paths; barrier rounds conflict-free).
func goldenRandom(rng *rand.Rand, n, rounds int, fabric schedules.FabricKind, mode schedules.Mode, keep float64) *schedules.Schedule {
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "random", N: n, Ports: n,
		Fabric: fabric, Mode: mode, Params: schedules.Params{BandwidthBytesPerSecond: 1e11, ReconfigSeconds: 1e-6}}
	var f *benes.Fabric
	if fabric == schedules.Benes {
		f, _ = benes.New(n)
	}
	type key struct{ round, kind, a, b, c int }
	taken := map[key]int{}
	fits := func(r int, c schedules.Circuit) bool {
		if taken[key{r, 0, c.Src, 0, 0}] != 0 || taken[key{r, 1, c.Dst, 0, 0}] != 0 {
			return false
		}
		for _, t := range c.Path.All() {
			if taken[key{r, 2, t.Stage, t.Switch, t.In}] != 0 || taken[key{r, 3, t.Stage, t.Switch, t.Out}] != 0 {
				return false
			}
			if st := taken[key{r, 4, t.Stage, t.Switch, 0}]; st != 0 && st != 1+int(t.State()) {
				return false
			}
		}
		return true
	}
	take := func(r int, c schedules.Circuit) {
		taken[key{r, 0, c.Src, 0, 0}], taken[key{r, 1, c.Dst, 0, 0}] = 1, 1
		for _, t := range c.Path.All() {
			taken[key{r, 2, t.Stage, t.Switch, t.In}] = 1
			taken[key{r, 3, t.Stage, t.Switch, t.Out}] = 1
			taken[key{r, 4, t.Stage, t.Switch, 0}] = 1 + int(t.State())
		}
	}
	for g := 0; g < rounds; g++ {
		for src, dst := range rng.Perm(n) {
			if rng.Float64() >= keep {
				continue
			}
			c := schedules.Circuit{Src: src, Dst: dst, Bytes: rng.Int64N(1 << 20), Group: g}
			if f != nil {
				c.Path = f.NewPath(src, dst, rng.Uint32N(uint32(max(n/2, 1))))
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

func mustFabric(n int) *benes.Fabric {
	f, err := benes.New(n)
	if err != nil {
		panic(err)
	}
	return f
}

func cloneSchedule(s *schedules.Schedule) *schedules.Schedule {
	r := *s
	r.Circuits = slices.Clone(s.Circuits) // paths are values: a copy shares nothing
	r.Rounds = slices.Clone(s.Rounds)
	return &r
}

// goldenDigest runs s every way the package offers and hashes what comes out: results,
// timelines, the exported order, and error texts.
func goldenDigest(t *testing.T, s *schedules.Schedule, d *schedules.Demand) string {
	h := sha256.New()
	put := func(tag string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", tag, len(b))
		h.Write(b)
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	events := -1
	var firstErr error
	for _, checked := range []bool{false, true} {
		for _, rc := range []emulator.ReconfigModel{emulator.ParallelReconfig(1e-6), emulator.ControllerReconfig(2e-7, 1e-6)} {
			cfg := emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: rc, PathsChecked: checked}
			res, tl, err := emulator.Run(context.Background(), s, d, cfg)
			put("run", []any{res, tl, errText(err)})
			res2, err2 := emulator.RunResult(context.Background(), s, d, cfg)
			put("result", []any{res2, errText(err2)})
			checkRunChecked(t, s, d, cfg, res, tl, err)
			if err == nil && events < 0 {
				events = res.Events
			}
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	o, err := emulator.NewOrder(s)
	put("order", errText(err))
	if err == nil {
		put("epochs", o.Epochs())
		put("rounds", o.Rounds())
		put("shape", []any{o.Len(), o.NumEpochs(), o.Fabric(), o.Mode()})
		for c := range o.Len() {
			put("c", [][]int32{o.Predecessors(c), o.Successors(c), o.Waits(c), o.Triggers(c)})
		}
		for e := range o.NumEpochs() {
			put("e", []any{o.Epoch(e), o.RequireCount(e), o.Users(e)})
		}
		res, tl, err := emulator.RunOrder(context.Background(), o, s, d, emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)})
		put("runorder", []any{res, tl, errText(err)})
	}
	sum := fmt.Sprintf("circuits=%d events=%d sha256=%x", len(s.Circuits), events, h.Sum(nil)[:16])
	if firstErr != nil {
		sum += " error=" + fmt.Sprintf("%q", firstErr.Error())
	}
	return sum
}

// checkRunChecked: RunChecked gives Run's result and error, and the violations VerifyTimeline
// finds in Run's timeline (none); in barrier mode the timeline by round it checks expands to
// Run's timeline byte for byte. (Not part of the digest: the golden file predates RunChecked.
// Run's barrier timeline is itself that expansion now, so the digest of Run, taken with the
// code that listed barrier entries directly, is what pins the timeline by round.)
func checkRunChecked(t *testing.T, s *schedules.Schedule, d *schedules.Demand, cfg emulator.Config, res *emulator.Result, tl *schedules.Timeline, err error) {
	t.Helper()
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	resC, vs, errC := emulator.RunChecked(context.Background(), s, d, cfg)
	if (err == nil) != (errC == nil) || err != nil && err.Error() != errC.Error() {
		t.Fatalf("%s: RunChecked error %v, Run's %v", s.Algorithm, errC, err)
	}
	if err != nil {
		return
	}
	if js(resC) != js(res) {
		t.Fatalf("%s: RunChecked result differs from Run's:\n%s\n%s", s.Algorithm, js(resC), js(res))
	}
	if want := schedules.VerifyTimeline(s, tl); js(vs) != js(want) {
		t.Fatalf("%s: RunChecked violations %v, VerifyTimeline of Run's timeline %v", s.Algorithm, vs, want)
	}
	_, rt, err := emulator.RoundTimelineOf(context.Background(), s, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if (rt != nil) != (s.Mode == schedules.Barrier) {
		t.Fatalf("%s: %s mode, timeline by round %v", s.Algorithm, s.Mode, rt != nil)
	}
	if rt != nil && js(rt.Expand()) != js(tl) {
		t.Fatalf("%s: the timeline by round does not expand to Run's timeline", s.Algorithm)
	}
}

// hop changes traversal h of circuit i's path with fn (a benes.Path is immutable).
func hop(s *schedules.Schedule, i, h int, fn func(*benes.Traversal)) {
	hops := s.Circuits[i].Path.Traversals()
	fn(&hops[h])
	s.Circuits[i].Path = benes.PathOf(hops)
}
