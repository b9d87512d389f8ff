package emulator_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// testMatrices are small demands with the shapes the seed's traces have: uniform, skewed towards
// a hot expert, sparse, a permutation, and a size that needs padding.
func testMatrices() map[string]*schedules.Demand {
	ms := map[string]*schedules.Demand{}
	uniform := schedules.NewDemand(8)
	for i := range 8 {
		for j := range 8 {
			uniform.Bytes[i][j] = 1 << 20
		}
	}
	ms["uniform8"] = uniform
	rng := rand.New(rand.NewPCG(5, 5))
	skew := schedules.NewDemand(8)
	for i := range 8 {
		for j := range 8 {
			skew.Bytes[i][j] = rng.Int64N(1 << 20)
			if j == 3 {
				skew.Bytes[i][j] *= 6 // a hot receiver
			}
		}
	}
	ms["skewed8"] = skew
	sparse := schedules.NewDemand(4)
	sparse.Bytes[0][1], sparse.Bytes[1][0], sparse.Bytes[2][3], sparse.Bytes[0][3] = 5e5, 7e5, 1e6, 3e5
	ms["sparse4"] = sparse
	perm := schedules.NewDemand(8)
	for i, j := range rng.Perm(8) {
		perm.Bytes[i][j] = 1e6 + int64(i)*1e5
	}
	ms["perm8"] = perm
	padded := schedules.NewDemand(6)
	for i := range 6 {
		for j := range 6 {
			padded.Bytes[i][j] = rng.Int64N(1 << 19)
		}
	}
	ms["padded6"] = padded
	return ms
}

// TestEverySchedulerTimelineVerifies runs every registered scheduler on every test matrix, on
// both fabrics, at two reconfiguration delays, under both reconfiguration models, and checks
// each schedule with Verify and each emulated timeline with VerifyTimeline.
func TestEverySchedulerTimelineVerifies(t *testing.T) {
	names := schedules.Names()
	if len(names) == 0 {
		t.Fatal("no scheduler registered")
	}
	for mname, d := range testMatrices() {
		for _, name := range names {
			for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
				for _, alpha := range []float64{0, 10e-6} {
					t.Run(fmt.Sprintf("%s/%s/%s/α=%g", name, mname, fabric, alpha), func(t *testing.T) {
						sch, _ := schedules.Lookup(name)
						o := schedules.Options{Bandwidth: 100e9, Reconfig: alpha, Fabric: fabric}
						s, err := sch.Schedule(context.Background(), d, o)
						if err != nil {
							t.Fatal(err)
						}
						if vs := schedules.Verify(s, d); len(vs) > 0 {
							t.Fatalf("schedule fails the verifier: %v", vs)
						}
						for _, rc := range []emulator.ReconfigModel{emulator.ParallelReconfig(alpha), emulator.ControllerReconfig(alpha/10, alpha)} {
							res, tl, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: emulator.BandwidthModel(100e9), Reconfig: rc})
							if err != nil {
								t.Fatal(err)
							}
							if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
								t.Fatalf("%s: timeline fails the verifier: %v", rc.Name(), vs)
							}
							// No schedule beats the lower bounds.
							if res.Completion < res.Bounds.Max()*(1-1e-9) {
								t.Fatalf("%s: completion %g below the lower bound %g", rc.Name(), res.Completion, res.Bounds.Max())
							}
						}
					})
				}
			}
		}
	}
}

// TestTetrisPlannedEqualsEmulated: the Tetris planner applies Tetris §3.3's Start rule, the
// emulator the same dependencies on events; under the bandwidth model and parallel
// reconfiguration at the planning b and α_r, each circuit's planned start and end must be its
// emulated ones (to 1e-9 relative), in partial mode and with the no-partial ablation. The barrier
// baselines plan their rounds with the same all-stop rule, so they must agree too, and so must
// Sunflow and BFF on the Beneš fabric under their default (earliest) mapping, which commits each
// circuit with the same rule.
func TestPlannedEqualsEmulated(t *testing.T) {
	for mname, d := range testMatrices() {
		for _, name := range []string{"tetris", "tetris+", "snb", "bvn", "bvn-maxmin", "bvn-sinkhorn", "maxweight", "solstice", "sunflow", "bff"} {
			for _, alpha := range []float64{0, 100e-9, 10e-6, 1e-3} {
				for _, noPartial := range []bool{false, true} {
					if noPartial && name != "tetris" && name != "tetris+" && name != "snb" {
						continue // a Tetris ablation: the others ignore it
					}
					t.Run(fmt.Sprintf("%s/%s/α=%g/no-partial=%v", name, mname, alpha, noPartial), func(t *testing.T) {
						sch, err := schedules.Lookup(name)
						if err != nil {
							t.Fatal(err)
						}
						o := schedules.Options{Bandwidth: 100e9, Reconfig: alpha, NoPartial: noPartial}
						s, err := sch.Schedule(context.Background(), d, o)
						if err != nil {
							t.Fatal(err)
						}
						_, tl, err := emulator.Run(context.Background(), s, d,
							emulator.Config{Transfer: emulator.BandwidthModel(100e9), Reconfig: emulator.ParallelReconfig(alpha)})
						if err != nil {
							t.Fatal(err)
						}
						for i, c := range s.Circuits {
							if c.PlannedStart == nil || c.PlannedEnd == nil {
								t.Fatalf("circuit %d has no planned times", i)
							}
							ct := tl.Circuits[i]
							if !close(*c.PlannedStart, ct.TransmitStart) || !close(*c.PlannedEnd, ct.End) {
								t.Fatalf("circuit %d (%d→%d, group %d): planned %g..%g, emulated %g..%g",
									i, c.Src, c.Dst, c.Group, *c.PlannedStart, *c.PlannedEnd, ct.TransmitStart, ct.End)
							}
						}
					})
				}
			}
		}
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-12) }
