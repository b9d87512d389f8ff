package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// genDemand draws a demand of 2 to 9 ports (sizes that are not powers of two get padded), each
// entry empty with probability about one third.
func genDemand(t *rapid.T) *schedules.Demand {
	n := rapid.IntRange(2, 9).Draw(t, "ports")
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if rapid.IntRange(0, 2).Draw(t, "empty") > 0 {
				d.Bytes[i][j] = rapid.Int64Range(1, 8<<20).Draw(t, "bytes")
			}
		}
	}
	return d
}

// sameRun fails t unless the walker-based Run and the oracle give the same result and timeline,
// field for field and byte for byte in JSON.
func sameRun(t *rapid.T, s *schedules.Schedule, d *schedules.Demand, cfg Config) {
	res, tl, err := Run(context.Background(), s, d, cfg)
	wantRes, wantTl, wantErr := oracleRun(context.Background(), s, d, cfg)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("walker error %v, oracle error %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(res, wantRes) {
		t.Fatalf("results differ:\nwalker %+v\noracle %+v", res, wantRes)
	}
	if !reflect.DeepEqual(tl, wantTl) {
		t.Fatalf("timelines differ:\nwalker %+v\noracle %+v", tl, wantTl)
	}
	a, _ := json.Marshal([]any{res, tl})
	b, _ := json.Marshal([]any{wantRes, wantTl})
	if !bytes.Equal(a, b) {
		t.Fatalf("JSON differs:\nwalker %s\noracle %s", a, b)
	}
}

// Every registered scheduler on random demands, on both fabrics, in partial and barrier mode (the
// barrier baselines, and Tetris with --no-partial), under both reconfiguration models: the
// emulator rewritten on the Walker gives exactly what the engine it replaced gave.
func TestPropertyWalkerMatchesOracleOnSchedulers(t *testing.T) {
	names := schedules.Names()
	if len(names) < 8 {
		t.Fatalf("only %d schedulers registered: %v", len(names), names)
	}
	rapid.Check(t, func(t *rapid.T) {
		d := genDemand(t)
		name := rapid.SampledFrom(names).Draw(t, "algorithm")
		alpha := rapid.SampledFrom([]float64{0, 1e-8, 1e-6, 1e-5, 1e-3}).Draw(t, "alpha")
		o := schedules.Options{Bandwidth: 1e11, Reconfig: alpha,
			Fabric:    rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric"),
			NoPartial: name == "tetris" && rapid.Bool().Draw(t, "no-partial")}
		sch, _ := schedules.Lookup(name)
		s, err := sch.Schedule(context.Background(), d, o)
		if err != nil {
			t.Fatal(err)
		}
		rc := ParallelReconfig(alpha)
		if rapid.Bool().Draw(t, "controller") {
			rc = ControllerReconfig(alpha/rapid.Float64Range(1, 20).Draw(t, "tr-part"), alpha)
		}
		sameRun(t, s, d, Config{Transfer: BandwidthModel(1e11), Reconfig: rc})
	})
}

// The same on random schedules (not only what schedulers produce): any valid schedule, either
// mode, either fabric, with zero-length circuits and simultaneous completions.
func TestPropertyWalkerMatchesOracleOnRandomSchedules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		s := genSchedule(t, mode)
		if rapid.Bool().Draw(t, "zero-lengths") {
			for i := range s.Circuits {
				if i%3 == 0 {
					s.Circuits[i].Bytes = 0
				}
			}
		}
		alpha := rapid.SampledFrom([]float64{0, 1e-9, 1e-6}).Draw(t, "alpha")
		rc := ParallelReconfig(alpha)
		if rapid.Bool().Draw(t, "controller") {
			rc = ControllerReconfig(alpha/3, alpha)
		}
		sameRun(t, s, nil, Config{Transfer: BandwidthModel(1e11), Reconfig: rc})
	})
}
