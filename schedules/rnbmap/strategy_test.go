package rnbmap_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/bff"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
	"github.com/tetris-hil/tetris-hil/schedules/sunflow"
)

// TestSchedulersVerifyUnderEveryStrategy runs Sunflow and BFF on MoE-like demands through the
// registry path (Options.RNBMapping) and asks the verifier to accept every schedule, and the
// schedule's parameters to name the strategy and, for avoid-live, the fallback count.
func TestSchedulersVerifyUnderEveryStrategy(t *testing.T) {
	algos := []struct {
		name     string
		schedule schedules.SchedulerFunc
	}{{sunflow.Name, sunflow.Schedule}, {bff.Name, bff.Schedule}}
	for _, a := range algos {
		for _, strategy := range []string{"", "earliest", "looping", "avoid-live"} {
			for _, n := range []int{5, 8, 16, 32} {
				for seed := range uint64(3) {
					t.Run(fmt.Sprintf("%s/%q/n=%d/seed=%d", a.name, strategy, n, seed), func(t *testing.T) {
						d := moetest.Skewed(seed, n)
						o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6, RNBMapping: strategy}
						s, err := a.schedule(context.Background(), d, o)
						if err != nil {
							t.Fatal(err)
						}
						if vs := schedules.Verify(s, d); len(vs) != 0 {
							t.Fatal(schedules.ViolationsError(vs))
						}
						want := strategy
						if want == "" {
							want = "earliest"
						}
						opts := s.Params.Options
						if opts["rnb_mapping"] != want {
							t.Errorf("rnb_mapping %q, want %q", opts["rnb_mapping"], want)
						}
						fb, err := strconv.Atoi(opts["rnb_fallbacks"])
						switch {
						case want != "avoid-live" && opts["rnb_fallbacks"] != "":
							t.Errorf("%s records rnb_fallbacks %q", want, opts["rnb_fallbacks"])
						case want == "avoid-live" && (err != nil || fb < 0 || fb > len(s.Circuits)):
							t.Errorf("rnb_fallbacks %q is not a count of the %d circuits", opts["rnb_fallbacks"], len(s.Circuits))
						}
					})
				}
			}
		}
	}
}

func TestScheduleRejectsUnknownStrategy(t *testing.T) {
	d := moetest.Skewed(0, 4)
	plan, err := sunflow.Plan(context.Background(), d, 1e9, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rnbmap.Schedule("test", d, schedules.Options{Bandwidth: 1e9, RNBMapping: "greedy"}, plan, nil); err == nil {
		t.Error("rnbmap.Schedule accepted strategy \"greedy\"")
	}
	if _, err := sunflow.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1e9, RNBMapping: "greedy"}); err == nil {
		t.Error("Options.Check accepted RNB mapping \"greedy\"")
	}
}
