package hil

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// genDemand draws a demand of 2..12 ports, sparse or dense, with sizes over four orders of
// magnitude (and some zeros), so that completions sometimes coincide and sometimes do not.
func genDemand(t *rapid.T) *schedules.Demand {
	n := rapid.IntRange(2, 12).Draw(t, "n")
	d := schedules.NewDemand(n)
	dense := rapid.Bool().Draw(t, "dense")
	uniform := rapid.Bool().Draw(t, "uniform")
	for i := range n {
		for j := range n {
			if !dense && rapid.IntRange(0, 2).Draw(t, "skip") > 0 {
				continue
			}
			if uniform {
				d.Bytes[i][j] = 1 << 20
				continue
			}
			d.Bytes[i][j] = rapid.Int64Range(0, 1<<24).Draw(t, "bytes")
		}
	}
	return d
}

// The virtual-time fake device running the compiled programs is the emulator: for every
// registered scheduler (and Tetris as barrier rounds, its "no partial" ablation), on both
// fabrics, under both reconfiguration models, every circuit's Ready, PathReady, ReconfigStart,
// TransmitStart and End, the switch changes and the counts equal the emulator's to 1e-12 s.
// The durations are the transfer model's own, so any difference is the compiler's or the
// device's, never the timing.
func TestCompiledVirtualEqualsEmulator(t *testing.T) {
	type variant struct {
		algo      string
		noPartial bool
	}
	var vs []variant
	for _, name := range schedules.Names() {
		vs = append(vs, variant{name, false})
	}
	vs = append(vs, variant{"tetris", true})
	modes := map[schedules.Mode]int{}
	for _, v := range vs {
		for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
			for _, ctrl := range []bool{false, true} {
				name := fmt.Sprintf("%s/nopartial=%v/%s/controller=%v", v.algo, v.noPartial, fabric, ctrl)
				t.Run(name, func(t *testing.T) {
					rapid.Check(t, func(t *rapid.T) {
						d := genDemand(t)
						alpha := rapid.SampledFrom([]float64{1e-6, 10e-6, 3e-3}).Draw(t, "alpha")
						bw := rapid.SampledFrom([]float64{370e9, 1e9}).Draw(t, "bw")
						sch, err := schedules.Lookup(v.algo)
						if err != nil {
							t.Fatal(err)
						}
						s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, Fabric: fabric, NoPartial: v.noPartial})
						if err != nil {
							t.Fatal(err)
						}
						rc := emulator.ParallelReconfig(alpha)
						if ctrl {
							rc = emulator.ControllerReconfig(alpha/3, alpha)
						}
						modes[s.Mode]++
						checkCompiledEqualsEmulator(t, s, d, emulator.Config{Transfer: emulator.BandwidthModel(bw), Reconfig: rc})
					})
				})
			}
		}
	}
	if modes[schedules.Partial] == 0 || modes[schedules.Barrier] == 0 {
		t.Fatalf("the variants covered modes %v; both partial and barrier must be", modes)
	}
}

func checkCompiledEqualsEmulator(t *rapid.T, s *schedules.Schedule, d *schedules.Demand, cfg emulator.Config) {
	wantRes, want, err := emulator.Run(context.Background(), s, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := emulator.NewOrder(s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(o, s)
	if err != nil {
		t.Fatal(err)
	}
	dev := program.Fake{Virtual: true, Duration: func(src, dst int, bytes int64) (float64, error) {
		return cfg.Transfer.Seconds(src, dst, bytes)
	}}
	st, err := dev.Execute(context.Background(), p, cfg.Reconfig.NewReconfigurer())
	if err != nil {
		t.Fatal(err)
	}
	got, counts := StampsTimeline(o, s, p, st)
	const tol = 1e-12
	for c, w := range want.Circuits {
		g := got.Circuits[c]
		if g.Circuit != w.Circuit || !near(g.Ready, w.Ready, tol) || !near(g.PathReady, w.PathReady, tol) ||
			!near(g.ReconfigStart, w.ReconfigStart, tol) || !near(g.TransmitStart, w.TransmitStart, tol) || !near(g.End, w.End, tol) {
			t.Fatalf("%s (%s, %s): circuit %d: compiled %+v, emulator %+v", s.Algorithm, s.Mode, s.Fabric, c, g, w)
		}
		if h := st.Start[c] - st.Target[c]; h != 0 {
			t.Fatalf("circuit %d: the virtual device started %g s after its waits ended", c, h)
		}
	}
	if !sameChanges(got.SwitchChanges, want.SwitchChanges, tol) {
		t.Fatalf("%s: switch changes differ:\ncompiled %v\nemulator %v", s.Algorithm, got.SwitchChanges, want.SwitchChanges)
	}
	// The counts, through the emulator's own summary of a timeline.
	g := emulator.Summarize(s, d, got, cfg, counts)
	if g.Completion != wantRes.Completion || g.StateChanges != wantRes.StateChanges || g.ReconfigEvents != wantRes.ReconfigEvents ||
		g.Events != wantRes.Events || g.Groups != wantRes.Groups || !near(g.RNBWait, wantRes.RNBWait, 1e-9) {
		t.Fatalf("%s: summary: compiled %+v, emulator %+v", s.Algorithm, g, wantRes)
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// sameChanges compares switch changes as multisets: within one command the walker lists them in
// order of request, which is not an execution rule.
func sameChanges(a, b []schedules.SwitchChange, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(x, y schedules.SwitchChange) int {
		switch {
		case x.Start != y.Start:
			return cmpF(x.Start, y.Start)
		case x.Stage != y.Stage:
			return int(x.Stage - y.Stage)
		case x.Switch != y.Switch:
			return int(x.Switch - y.Switch)
		}
		return int(x.To) - int(y.To)
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, key)
	slices.SortFunc(b, key)
	for i := range a {
		x, y := a[i], b[i]
		if x.Stage != y.Stage || x.Switch != y.Switch || x.From != y.From || x.To != y.To || !near(x.Start, y.Start, tol) || !near(x.End, y.End, tol) {
			return false
		}
	}
	return true
}

func cmpF(a, b float64) int {
	if a < b {
		return -1
	}
	return 1
}

// In real time the fake device keeps the programs' semantics whatever its timing: every copy
// starts at or after its target, which is the latest end of its predecessors and of its
// signals' commands, and lasts exactly its modelled time; every command is requested no earlier
// than the last end its signals require, and lasts α_r; and the timeline passes the verifier.
func TestCompiledRealTimeKeepsSemantics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genDemand(t)
		algo := rapid.SampledFrom(schedules.Names()).Draw(t, "algo")
		fabric := rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")
		const alpha, bw = 2e-6, 1e12 // µs copies: a check takes a millisecond or so
		sch, err := schedules.Lookup(algo)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, Fabric: fabric})
		if err != nil {
			t.Fatal(err)
		}
		o, err := emulator.NewOrder(s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(o, s)
		if err != nil {
			t.Fatal(err)
		}
		tm := emulator.BandwidthModel(bw)
		st, err := program.Fake{Duration: tm.Seconds}.Execute(context.Background(), p, emulator.ParallelReconfig(alpha).NewReconfigurer())
		if err != nil {
			t.Fatal(err)
		}
		for _, steps := range p.Endpoints {
			for _, step := range steps {
				c := step.Circuit
				want := 0.0
				for _, a := range step.After {
					want = max(want, st.End[a])
				}
				for _, g := range step.Signals {
					want = max(want, st.Commands[st.CommandOf[g]].End)
				}
				dur, _ := tm.Seconds(0, 0, step.Bytes)
				if st.Target[c] != want || st.Start[c] < want || st.End[c] != st.Start[c]+dur {
					t.Fatalf("circuit %d: target %g (waits end %g), %g..%g for a %g s copy", c, st.Target[c], want, st.Start[c], st.End[c], dur)
				}
			}
		}
		for id, cmd := range st.Commands {
			for _, g := range cmd.Signals {
				for _, q := range p.Signals[g].Requires {
					if cmd.Requested < st.End[q] {
						t.Fatalf("command %d requested at %g, before circuit %d, which it requires, ended at %g", id, cmd.Requested, q, st.End[q])
					}
				}
			}
			if k := len(cmd.Signals); k > 0 && p.Signals[cmd.Signals[0]].Changes > 0 && (cmd.Start != cmd.Requested || cmd.End != cmd.Requested+alpha) {
				t.Fatalf("command %d: %+v under α_r = %g in parallel", id, cmd, alpha)
			}
		}
		tl, _ := StampsTimeline(o, s, p, st)
		if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
			t.Fatalf("%s on %s: %v", algo, fabric, vs[0])
		}
	})
}
