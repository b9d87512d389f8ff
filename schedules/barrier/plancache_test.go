package barrier

import (
	"context"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// TestPlanCacheSameSchedules: with one PlanCache shared across calls at different bandwidths,
// α_r and fabrics, every barrier scheduler returns exactly the schedule it returns without one,
// on the first call (a miss) and the later ones (hits); editing a returned schedule's options
// does not reach the cache.
func TestPlanCacheSameSchedules(t *testing.T) {
	algos := map[string]schedules.SchedulerFunc{"bvn": BvN, "bvn-maxmin": BvNMaxMin, "solstice": Solstice,
		"maxweight": MaxWeight, "bvn-sinkhorn": BvNSinkhorn}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 6).Draw(t, "n")
		d := schedules.NewDemand(n)
		for i := range n {
			for j := range n {
				if i != j && rapid.Bool().Draw(t, "pair") {
					d.Bytes[i][j] = rapid.Int64Range(1, 1<<30).Draw(t, "bytes")
				}
			}
		}
		cache := new(schedules.PlanCache)
		for _, name := range []string{"bvn", "bvn-maxmin", "solstice", "maxweight", "bvn-sinkhorn"} {
			for call := range 3 {
				o := schedules.Options{
					Bandwidth: rapid.SampledFrom([]float64{12.5e9, 100e9}).Draw(t, "b"),
					Reconfig:  rapid.SampledFrom([]float64{0, 1e-6, 1e-3}).Draw(t, "α"),
					Fabric:    rapid.SampledFrom([]schedules.FabricKind{"", schedules.Benes, schedules.Crossbar}).Draw(t, "fabric"),
				}
				want, err := algos[name](context.Background(), d, o)
				if err != nil {
					t.Fatal(err)
				}
				o.Plans = cache
				got, err := algos[name](context.Background(), d, o)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s call %d: the schedule with the cache differs", name, call)
				}
				got.Params.Options["rounds"] = "edited"
			}
		}
	})
}
