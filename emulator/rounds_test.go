package emulator_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// barrierAlgos are the schedulers that can hand out their schedules round by round.
var barrierAlgos = []string{"bvn", "bvn-maxmin", "bvn-sinkhorn", "maxweight", "solstice"}

// drawRoundCase draws a demand, a barrier scheduler's options and execution models.
func drawRoundCase(t *rapid.T) (*schedules.Demand, string, schedules.Options, emulator.Config) {
	n := rapid.IntRange(1, 12).Draw(t, "n")
	d := schedules.NewDemand(n)
	density := rapid.Float64Range(0, 1).Draw(t, "density")
	for i := range n {
		for j := range n {
			if i != j && rapid.Float64Range(0, 1).Draw(t, "cell") < density {
				d.Bytes[i][j] = rapid.Int64Range(1, 1<<24).Draw(t, "bytes")
			}
		}
	}
	algo := rapid.SampledFrom(barrierAlgos).Draw(t, "algo")
	o := schedules.Options{Bandwidth: 1e11, Reconfig: rapid.SampledFrom([]float64{0, 1e-6, 1e-5}).Draw(t, "α_r"),
		Fabric: rapid.SampledFrom([]schedules.FabricKind{"", schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")}
	if rapid.Bool().Draw(t, "plan cache") {
		o.Plans = new(schedules.PlanCache)
	}
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(rapid.Float64Range(1e10, 1e12).Draw(t, "b")),
		Reconfig: emulator.ParallelReconfig(o.Reconfig)}
	if rapid.Bool().Draw(t, "controller") {
		cfg.Reconfig = emulator.Controller(emulator.ControllerTiming{TR: rapid.Float64Range(0, 5e-6).Draw(t, "T_r"),
			TW: rapid.Float64Range(0, 2e-5).Draw(t, "T_w"), Batch: rapid.IntRange(0, 8).Draw(t, "B"),
			SerialSettle: rapid.Bool().Draw(t, "serial")})
	}
	if rapid.Bool().Draw(t, "α-β") {
		c := &model.Calibration{Version: model.FormatVersion}
		for g := range n {
			c.Inventory.GPUs = append(c.Inventory.GPUs, model.GPU{Index: g, Name: "g"})
		}
		for i := range n {
			for j := range n {
				c.Pairs = append(c.Pairs, model.PairFit{Src: i, Dst: j, Alpha: rapid.Float64Range(0, 3e-5).Draw(t, "α"),
					Beta: 1 / rapid.Float64Range(2e10, 4e11).Draw(t, "1/β"), R2: 1})
			}
		}
		m, err := emulator.AlphaBetaModel(c, nil)
		if err != nil {
			t.Fatalf("calibration: %v", err)
		}
		cfg.Transfer = m
	}
	return d, algo, o, cfg
}

// streamed plans d round by round and runs it through RoundVerifier and RoundRun, returning the
// circuits and rounds it saw (copied), its result, per-switch counts and violations.
func streamed(t *rapid.T, algo string, d *schedules.Demand, o schedules.Options, cfg emulator.Config) ([]schedules.Circuit, []schedules.Round, *emulator.Result, []emulator.SwitchCount, []schedules.Violation) {
	ctx := context.Background()
	sch, err := schedules.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := schedules.ScheduleRounds(ctx, sch, d, o)
	if err != nil || !ok {
		t.Fatalf("%s: ScheduleRounds: ok %v, %v", algo, ok, err)
	}
	ver, vs := schedules.NewRoundVerifier(&st.Header, d)
	if len(vs) > 0 {
		return nil, nil, nil, nil, vs
	}
	run, err := emulator.NewRoundRun(&st.Header, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cs []schedules.Circuit
	var rounds []schedules.Round
	for {
		r, ok, err := st.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		vs = append(vs, ver.Round(r)...)
		for _, c := range r.Circuits {
			s, e := *c.PlannedStart, *c.PlannedEnd // the stream reuses its buffers
			c.PlannedStart, c.PlannedEnd = &s, &e
			cs = append(cs, c)
		}
		if r.Round != nil {
			rounds = append(rounds, *r.Round)
		}
		if err := run.Round(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	vs = append(vs, ver.Finish()...)
	res, perSwitch, err := run.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return cs, rounds, res, perSwitch, vs
}

// TestRoundRunMatchesRun: every barrier scheduler handed out round by round gives the circuits
// and rounds of its whole schedule, with its header (options included, once the stream ends);
// RoundVerifier finds no violation, as Verify finds none; and RoundRun's Result and per-switch
// counts are RunResult's, RunChecked's and SwitchChanges', value for value, on Beneš and
// crossbar, under the parallel and controller reconfiguration models and the bandwidth and α-β
// transfer models.
func TestRoundRunMatchesRun(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, algo, o, cfg := drawRoundCase(t)
		ctx := context.Background()
		sch, _ := schedules.Lookup(algo)
		whole, err := sch.Schedule(ctx, d, o)
		if err != nil {
			t.Fatal(err)
		}
		if vs := schedules.Verify(whole, d); len(vs) > 0 {
			t.Fatalf("whole schedule: %v", vs)
		}
		want, err := emulator.RunResult(ctx, whole, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		checked, vs, err := emulator.RunChecked(ctx, whole, d, cfg)
		if err != nil || len(vs) > 0 {
			t.Fatalf("RunChecked: %v %v", err, vs)
		}
		if !reflect.DeepEqual(checked, want) {
			t.Fatalf("RunChecked and RunResult differ")
		}
		wantSw, err := emulator.SwitchChanges(whole, false)
		if err != nil {
			t.Fatal(err)
		}
		cs, rounds, got, gotSw, vs := streamed(t, algo, d, o, cfg)
		if len(vs) > 0 {
			t.Fatalf("stream: %v", vs)
		}
		if !reflect.DeepEqual(cs, whole.Circuits) && !(len(cs) == 0 && len(whole.Circuits) == 0) {
			t.Fatalf("stream's circuits differ from the whole schedule's (%d vs %d)", len(cs), len(whole.Circuits))
		}
		if !reflect.DeepEqual(rounds, whole.Rounds) && !(len(rounds) == 0 && len(whole.Rounds) == 0) {
			t.Fatalf("stream's rounds %v, whole %v", rounds, whole.Rounds)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("RoundRun's result differs:\n got %+v\nwant %+v", got, want)
		}
		if !reflect.DeepEqual(gotSw, wantSw) {
			t.Fatalf("per-switch counts: got %v, want %v", gotSw, wantSw)
		}
	})
}

// TestRoundVerifierFindsWhatVerifyFinds: a barrier schedule corrupted (a byte added, a receiver
// taken from another circuit of its round, a path of another circuit) and handed to
// RoundVerifier round by round gives violations of the kinds Verify gives on it whole.
func TestRoundVerifierFindsWhatVerifyFinds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, algo, o, _ := drawRoundCase(t)
		o.Plans = nil
		sch, _ := schedules.Lookup(algo)
		s, err := sch.Schedule(context.Background(), d, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Circuits) < 2 {
			t.Skip("too few circuits to corrupt")
		}
		i := rapid.IntRange(0, len(s.Circuits)-1).Draw(t, "circuit")
		c := &s.Circuits[i]
		switch rapid.IntRange(0, 2).Draw(t, "corruption") {
		case 0:
			c.Bytes++
		case 1:
			j := rapid.IntRange(0, len(s.Circuits)-1).Draw(t, "other")
			c.Dst = s.Circuits[j].Dst
		case 2:
			j := rapid.IntRange(0, len(s.Circuits)-1).Draw(t, "other")
			c.Path = s.Circuits[j].Path
		}
		kinds := func(vs []schedules.Violation) []schedules.ViolationKind {
			var ks []schedules.ViolationKind
			for _, v := range vs {
				ks = append(ks, v.Kind)
			}
			slices.Sort(ks)
			return ks
		}
		want := kinds(schedules.Verify(s, d))
		ver, vs := schedules.NewRoundVerifier(s, d)
		if len(vs) > 0 {
			t.Fatalf("header: %v", vs)
		}
		var got []schedules.Violation
		for lo := 0; lo < len(s.Circuits); {
			hi := lo
			for hi < len(s.Circuits) && s.Circuits[hi].Group == s.Circuits[lo].Group {
				hi++
			}
			r := schedules.StreamRound{Group: s.Circuits[lo].Group, Circuits: s.Circuits[lo:hi]}
			got = append(got, ver.Round(r)...)
			lo = hi
		}
		got = append(got, ver.Finish()...)
		if !slices.Equal(kinds(got), want) {
			t.Fatalf("round by round %v, whole %v", got, schedules.Verify(s, d))
		}
	})
}
