package switchctl_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/fake"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

func TestSummarise(t *testing.T) {
	for _, tc := range []struct {
		xs       []float64
		med, p99 float64
	}{
		{[]float64{3, 1, 2}, 2, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 4},
		{func() []float64 {
			var x []float64
			for i := 1; i <= 200; i++ {
				x = append(x, float64(i))
			}
			return x
		}(), 100.5, 198},
	} {
		s := switchctl.Summarise(tc.xs)
		if s.MedianSeconds != tc.med || s.P99Seconds != tc.p99 || s.Samples != len(tc.xs) {
			t.Errorf("Summarise(%v) = %+v, want median %v p99 %v", tc.xs, s, tc.med, tc.p99)
		}
	}
}

// TestBenchFake: on the fake with T_r = 1ms and T_w = 3ms the bench derives both within 10%.
func TestBenchFake(t *testing.T) {
	w := switchtest.Fabric{Ports: 4, Backend: "fake", TR: time.Millisecond, TW: 3 * time.Millisecond}.Wiring(t)
	log := &switchctl.ChangeLog{}
	c := fake.New(w, switchctl.Options{Log: log})
	f, err := switchctl.Bench(context.Background(), c, log, w, switchctl.BenchOptions{Rounds: 30})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.TRSeconds-1e-3) > 1e-4 || math.Abs(f.TWSeconds-3e-3) > 3e-4 {
		t.Errorf("T_r %v, T_w %v; want 1ms and 3ms within 10%%", f.TRSeconds, f.TWSeconds)
	}
	if f.RoundTrip.Samples != 30 || f.Switches != 6 || f.Validate() != nil {
		t.Errorf("bench file %+v", f)
	}
}
