package emulator

import (
	"context"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// seedStart computes every circuit's transmit start with Tetris §3.3's planning rule, applied
// circuit by circuit in schedule order: Start(S, p) = max over (s, i, j) ∈ p of {I_{s,i},
// O_{s,j}, q_{s,i,j}} (and the endpoints' release times), where q = Q_s if the switch's last
// planned state σ_s is state(i, j), and F_s + α_r otherwise. On a crossbar the transmitter's
// re-pointing plays the switch's part. It shares no code with the emulator, which runs on
// completion events; under the parallel model the two must agree exactly.
func seedStart(s *schedules.Schedule, dur []float64, alpha float64) []float64 {
	f, _ := s.BenesFabric()
	tx := make([]float64, s.N)
	rx := make([]float64, s.N)
	type sw struct {
		sigma benes.State
		F, Q  float64
	}
	var sws map[[2]int]*sw
	var inLane, outLane map[[3]int]float64
	if f != nil {
		sws = map[[2]int]*sw{}
		inLane, outLane = map[[3]int]float64{}, map[[3]int]float64{}
	}
	point := make([]int, s.N)
	for i := range point {
		point[i] = -1
	}
	start := make([]float64, len(s.Circuits))
	for ci, c := range s.Circuits {
		st := max(tx[c.Src], rx[c.Dst])
		if f == nil {
			if point[c.Src] != c.Dst {
				st += alpha
				point[c.Src] = c.Dst
			}
		}
		for _, t := range c.Path.All() {
			w := sws[[2]int{t.Stage, t.Switch}]
			if w == nil {
				w = &sw{sigma: benes.Bar}
				sws[[2]int{t.Stage, t.Switch}] = w
			}
			q := w.Q
			if w.sigma != t.State() {
				q = w.F + alpha
			}
			st = max(st, inLane[[3]int{t.Stage, t.Switch, t.In}], outLane[[3]int{t.Stage, t.Switch, t.Out}], q)
		}
		end := st + dur[ci]
		start[ci] = st
		tx[c.Src], rx[c.Dst] = end, end
		for _, t := range c.Path.All() {
			w := sws[[2]int{t.Stage, t.Switch}]
			if w.sigma != t.State() {
				w.Q, w.sigma = w.F+alpha, t.State()
			}
			w.F = max(w.F, end)
			inLane[[3]int{t.Stage, t.Switch, t.In}] = end
			outLane[[3]int{t.Stage, t.Switch, t.Out}] = end
		}
	}
	return start
}

// genSchedule draws a random valid schedule: n ∈ {2, …, 16}, some rounds of partial
// permutations, on either fabric, in either mode.
func genSchedule(t *rapid.T, mode schedules.Mode) *schedules.Schedule {
	n := 1 << rapid.IntRange(1, 4).Draw(t, "log2n")
	rounds := rapid.IntRange(1, 6).Draw(t, "rounds")
	fabric := rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")
	seed := rapid.Uint64().Draw(t, "seed")
	return randomSchedule(rand.New(rand.NewPCG(seed, 7)), n, rounds, fabric, mode, 0.7)
}

func TestPropertyPartialMatchesSeedStartRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSchedule(t, schedules.Partial)
		alpha := rapid.SampledFrom([]float64{0, 1e-9, 1e-6, 1e-3}).Draw(t, "alpha")
		cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(alpha)}
		res, tl, err := Run(context.Background(), s, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		dur := make([]float64, len(s.Circuits))
		for i, c := range s.Circuits {
			dur[i] = float64(c.Bytes) / 1e11
		}
		want := seedStart(s, dur, alpha)
		for i, ct := range tl.Circuits {
			if !near([]float64{ct.TransmitStart}, []float64{want[i]}) {
				t.Fatalf("circuit %d (%d→%d): emulated start %g, seed rule %g", i, s.Circuits[i].Src, s.Circuits[i].Dst, ct.TransmitStart, want[i])
			}
		}
		if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
			t.Fatalf("timeline fails the verifier: %v", vs)
		}
		checkAccounting(t, s, res, tl)
	})
}

func TestPropertyTimelinesVerify(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		s := genSchedule(t, mode)
		tr := rapid.SampledFrom([]float64{0, 1e-7, 1e-6}).Draw(t, "tr")
		tw := rapid.SampledFrom([]float64{0, 1e-6, 1e-5}).Draw(t, "tw")
		ctl := Config{Transfer: BandwidthModel(1e11), Reconfig: ControllerReconfig(tr, tw)}
		par := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(tr + tw)}
		rc, tlc, err := Run(context.Background(), s, nil, ctl)
		if err != nil {
			t.Fatal(err)
		}
		rp, tlp, err := Run(context.Background(), s, nil, par)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range []*schedules.Timeline{tlc, tlp} {
			if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
				t.Fatalf("timeline fails the verifier: %v", vs)
			}
		}
		checkAccounting(t, s, rc, tlc)
		checkAccounting(t, s, rp, tlp)
		// Serialising the requests can only delay: every command takes at least T_r + T_w.
		for i := range tlc.Circuits {
			if tlc.Circuits[i].End < tlp.Circuits[i].End*(1-1e-12) {
				t.Fatalf("circuit %d ends at %g under the controller, before %g in parallel", i, tlc.Circuits[i].End, tlp.Circuits[i].End)
			}
		}
		// With no request time the controller is the parallel model.
		if tr == 0 && !near([]float64{rc.Completion}, []float64{rp.Completion}) {
			t.Fatalf("T_r = 0: controller completion %g, parallel %g", rc.Completion, rp.Completion)
		}
		if rc.StateChanges != rp.StateChanges {
			t.Fatalf("state changes differ between models: %d, %d", rc.StateChanges, rp.StateChanges)
		}
	})
}

// checkAccounting checks the Result against the Timeline it came with.
func checkAccounting(t *rapid.T, s *schedules.Schedule, r *Result, tl *schedules.Timeline) {
	var rnb float64
	for _, ct := range tl.Circuits {
		rnb += ct.PathReady - ct.Ready
	}
	if !near([]float64{r.RNBWait, r.Completion}, []float64{rnb, tl.Completion()}) {
		t.Fatalf("RNB wait %g, completion %g; timeline says %g, %g", r.RNBWait, r.Completion, rnb, tl.Completion())
	}
	for _, e := range r.Endpoints {
		if e.Busy < 0 || e.Reconfiguring < 0 || e.Idle < 0 ||
			!near([]float64{e.Busy + e.Reconfiguring + e.Idle}, []float64{r.Completion}) && e.Busy+e.Reconfiguring <= r.Completion {
			t.Fatalf("%v: busy %g + reconfiguring %g + idle %g ≠ completion %g", e.Endpoint(), e.Busy, e.Reconfiguring, e.Idle, r.Completion)
		}
	}
	if s.Fabric == schedules.Benes && len(tl.SwitchChanges) != r.StateChanges {
		t.Fatalf("%d switch changes in the timeline, %d in the result", len(tl.SwitchChanges), r.StateChanges)
	}
}
