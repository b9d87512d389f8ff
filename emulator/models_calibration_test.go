package emulator

import (
	"testing"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
)

// TestAlphaBetaModelPiecesPatternsLoopback: the calibration model times each size with the piece
// covering it, takes the permutation fit where both patterns were measured, and uses a GPU's
// loopback pair where the calibration has one (and 0 s where it has none).
func TestAlphaBetaModelPiecesPatternsLoopback(t *testing.T) {
	c := &model.Calibration{Version: model.FormatVersion,
		Inventory: model.Inventory{GPUs: []model.GPU{{Index: 0, Name: "a"}, {Index: 1, Name: "b"}}},
		Pairs: []model.PairFit{
			{Src: 0, Dst: 1, Alpha: 10, Beta: 1, R2: 1, Pieces: []model.Piece{
				{FromBytes: 0, MinBytes: 1, MaxBytes: 90, Alpha: 10, Beta: 1},
				{FromBytes: 100, MinBytes: 110, MaxBytes: 1000, Alpha: -90, Beta: 2},
			}},
			{Src: 1, Dst: 0, Alpha: 20, Beta: 2, R2: 1},
			{Src: 1, Dst: 0, Pattern: model.Permutation, Alpha: 40, Beta: 4, R2: 1},
			{Src: 1, Dst: 1, Alpha: 1, Beta: 0.5, R2: 1},
		}}
	m, err := AlphaBetaModel(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src, dst int
		bytes    int64
		want     float64
	}{
		{0, 1, 50, 10 + 50},      // first piece
		{0, 1, 100, -90 + 2*100}, // second piece from its start
		{0, 1, 500, -90 + 2*500}, // second piece
		{1, 0, 10, 40 + 4*10},    // the permutation fit, not the isolated one
		{1, 1, 10, 1 + 0.5*10},   // GPU 1's loopback pair
		{0, 0, 10, 0},            // no loopback pair for GPU 0: never leaves the device
	} {
		got, err := m.Seconds(tc.src, tc.dst, tc.bytes)
		if err != nil || got != tc.want {
			t.Errorf("(%d→%d, %d B) = %g, %v; want %g", tc.src, tc.dst, tc.bytes, got, err, tc.want)
		}
	}
}

// A port outside the calibration (negative, or past its GPUs) is an error, not an index panic
// (FuzzAlphaBetaModel found the negative one).
func TestAlphaBetaModelPortOutside(t *testing.T) {
	c := &model.Calibration{Version: model.FormatVersion,
		Inventory: model.Inventory{GPUs: []model.GPU{{Index: 0, Name: "a"}, {Index: 1, Name: "b"}}},
		Pairs:     []model.PairFit{{Src: 0, Dst: 1, Alpha: 1, Beta: 1, R2: 1}}}
	m, err := AlphaBetaModel(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]int{{-1, 0}, {0, -2}, {2, 0}, {0, 1 << 40}} {
		if _, err := m.Seconds(p[0], p[1], 10); err == nil {
			t.Errorf("ports %v: no error", p)
		}
	}
}
