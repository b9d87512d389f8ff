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

// TestBenchBatch: on the fake configured with B (8 ports, 20 switches), the bench recovers B
// from the batches' busy times, and T_r and T_w within 10%.
func TestBenchBatch(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   int
	}{{"", 1}, {"batch: 4\n", 4}, {"batch: 7\n", 7}, {"batch: 16\n", 16}, {"batch: 0\n", 0}, {"batch: 40\n", 0}} {
		w := switchtest.Fabric{Ports: 8, Backend: "fake", TR: time.Millisecond, TW: 2 * time.Millisecond, Header: tc.header}.Wiring(t)
		log := &switchctl.ChangeLog{}
		c := fake.New(w, switchctl.Options{Log: log})
		var last, total int
		f, err := switchctl.Bench(context.Background(), c, log, w, switchctl.BenchOptions{Rounds: 10, BatchReps: 3,
			Progress: func(done, all int) { last, total = done, all }})
		if err != nil {
			t.Fatal(err)
		}
		if f.Batch != tc.want || math.Abs(f.TRSeconds-1e-3) > 1e-4 || math.Abs(f.TWSeconds-2e-3) > 2e-4 {
			t.Errorf("%q: B %d, T_r %v, T_w %v; want B %d, 1ms and 2ms (batches %+v)", tc.header, f.Batch, f.TRSeconds, f.TWSeconds, tc.want, f.BatchBusy)
		}
		// The samples say what B was read from: ⌈k/B⌉ requests for every k tried.
		m := w.Model()
		for _, s := range f.BatchBusy {
			if s.Requests != m.Requests(s.Changes) || s.Samples != 3 {
				t.Errorf("%q: %d changes counted as %d requests (%d samples), want %d", tc.header, s.Changes, s.Requests, s.Samples, m.Requests(s.Changes))
			}
		}
		if len(f.BatchBusy) < 2 || f.BatchBusy[len(f.BatchBusy)-1].Changes != 20 || last > total || last < 10+2*3 {
			t.Errorf("%q: batches %+v; progress %d of %d", tc.header, f.BatchBusy, last, total)
		}
	}
}
