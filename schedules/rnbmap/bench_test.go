package rnbmap_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
	"github.com/tetris-hil/tetris-hil/schedules/bff"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
	"github.com/tetris-hil/tetris-hil/schedules/sunflow"
)

// BenchmarkRNBMap maps Sunflow's and BFF's plans of skewed demands onto the Beneš fabric with both
// strategies: looping routes the live set once per distinct planned start; avoid-live searches
// each circuit's n/2 paths against the live circuits (and routes the whole plan once more if any
// circuit falls back).
func BenchmarkRNBMap(b *testing.B) {
	planners := []struct {
		name string
		plan func(d *schedules.Demand) ([]rnbmap.Circuit, error)
	}{
		{"sunflow", func(d *schedules.Demand) ([]rnbmap.Circuit, error) {
			return sunflow.Plan(context.Background(), d, 100e9, 10e-6, false)
		}},
		{"bff", func(d *schedules.Demand) ([]rnbmap.Circuit, error) {
			return bff.Plan(context.Background(), d, 100e9, 10e-6)
		}},
	}
	for _, p := range planners {
		for _, n := range []int{8, 16, 32, 64, 128} {
			plan, err := p.plan(moetest.Skewed(1, n))
			if err != nil {
				b.Fatal(err)
			}
			f, _ := benes.New(benes.SizeFor(n))
			for _, s := range rnbmap.Strategies {
				b.Run(fmt.Sprintf("%s/%s/n=%d", p.name, s, n), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := rnbmap.Map(f, plan, s, rnbmap.Timing{Bandwidth: 100e9, AlphaR: 1e-6}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
