package bff

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// BenchmarkBFF plans and maps onto the Beneš fabric at 800 Gb/s and α_r = 10 µs (Tetris §4.1
// defaults).
func BenchmarkBFF(b *testing.B) {
	o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6}
	for _, n := range []int{8, 16, 32, 64, 128} {
		d := moetest.Skewed(1, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Schedule(context.Background(), d, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBFFPlan is the planner alone, without the mapping.
func BenchmarkBFFPlan(b *testing.B) {
	for _, n := range []int{8, 128} {
		d := moetest.Skewed(1, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Plan(context.Background(), d, 100e9, 10e-6); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
