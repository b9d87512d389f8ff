package experiment

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func dense(n int) *schedules.Demand {
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if i != j {
				d.Bytes[i][j] = int64(1<<20 + 4096*((i*7+j*3)%13))
			}
		}
	}
	return d
}

// TestEstimateRun checks the circuit bounds by hand: a dense n×n demand has n(n−1) pairs; the
// Birkhoff–von Neumann family is bounded by (n² − 2n + 2)·n circuits.
func TestEstimateRun(t *testing.T) {
	for _, tc := range []struct {
		algo     string
		n        int
		circuits int64
	}{
		{"tetris", 8, 8*7 + 8},
		{"maxweight", 64, 64*63 + 64},
		{"bvn", 8, (64 - 16 + 2) * 8},
		{"bvn-sinkhorn", 256, (65536 - 512 + 2) * 256},
	} {
		e := EstimateRun(tc.algo, dense(tc.n), "")
		if e.Circuits != tc.circuits || e.Ports != tc.n || e.Bytes < e.Circuits*perCircuitBytes(0) {
			t.Errorf("%s n=%d: %+v, want %d circuits", tc.algo, tc.n, e, tc.circuits)
		}
	}
	// A crossbar has no paths: fewer bytes a circuit than Beneš.
	if b, x := EstimateRun("tetris", dense(16), schedules.Benes), EstimateRun("tetris", dense(16), schedules.Crossbar); x.Bytes >= b.Bytes {
		t.Errorf("crossbar estimate %d ≥ Beneš %d", x.Bytes, b.Bytes)
	}
}

// TestMaxMemoryRefusesBeforePlanning: above the limit nothing is planned (a scheduler that
// fails the test if called), and the error names every algorithm over the limit and n.
func TestMaxMemoryRefusesBeforePlanning(t *testing.T) {
	d := dense(256)
	cfg := Config{Algorithms: []string{"tetris", "bvn", failAlgo}, MaxMemory: 1 << 30, Options: schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6},
		Exec: emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}}
	d.Bytes[0][1] = failBytes // failAlgo fails when planned: it must not be
	_, err := Run(context.Background(), []Matrix{{Demand: d}}, cfg, Pool{Jobs: 2})
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("err %v, want a *MemoryError", err)
	}
	msg := err.Error()
	for _, want := range []string{"bvn on n = 256 needs about", "above the limit of 1GiB", "16646656 circuits"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "tetris on") || strings.Contains(msg, "\n") {
		t.Errorf("message %q names tetris, which fits, or is not one line", msg)
	}
	// Within the limit it runs.
	cfg.Algorithms, cfg.MaxMemory = []string{"tetris"}, 4<<30
	if _, err := Run(context.Background(), []Matrix{{Demand: dense(16)}}, cfg, Pool{}); err != nil {
		t.Fatal(err)
	}
}
