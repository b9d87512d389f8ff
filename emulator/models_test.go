package emulator

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func twoGPUCalibration() *model.Calibration {
	return &model.Calibration{Version: model.FormatVersion,
		Inventory: model.Inventory{GPUs: []model.GPU{{Index: 0, Name: "a"}, {Index: 1, Name: "b"}}},
		Pairs: []model.PairFit{
			{Src: 0, Dst: 1, Alpha: 10, Beta: 1, R2: 1},
			{Src: 1, Dst: 0, Alpha: 20, Beta: 2, R2: 1},
		}}
}

func TestAlphaBetaModel(t *testing.T) {
	ident, err := AlphaBetaModel(twoGPUCalibration(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Ports 0..3 on GPUs 0, 1, 1, 0: ports 1 and 2 share a GPU.
	mapped, err := AlphaBetaModel(twoGPUCalibration(), []int{0, 1, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		m        TransferModel
		src, dst int
		bytes    int64
		want     float64
		err      string
	}{
		{ident, 0, 1, 5, 10 + 5, ""},
		{ident, 1, 0, 5, 20 + 2*5, ""},
		{ident, 0, 2, 5, 0, "port 2 has no GPU"},
		{mapped, 3, 2, 5, 10 + 5, ""},   // GPU 0 → GPU 1
		{mapped, 2, 3, 5, 20 + 2*5, ""}, // GPU 1 → GPU 0
		{mapped, 1, 2, 5, 0, ""},        // same GPU: never leaves the device
		{mapped, 0, 4, 5, 0, "not in the port-to-GPU mapping"},
	}
	for _, tc := range tests {
		got, err := tc.m.Seconds(tc.src, tc.dst, tc.bytes)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("(%d→%d): error %v, want %q", tc.src, tc.dst, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("(%d→%d, %d B) = %g, %v; want %g", tc.src, tc.dst, tc.bytes, got, err, tc.want)
		}
	}
	if _, err := AlphaBetaModel(twoGPUCalibration(), []int{0, 2}); err == nil {
		t.Error("a mapping to GPU 2 of a 2-GPU calibration was accepted")
	}
	one := twoGPUCalibration()
	one.Pairs = one.Pairs[:1]
	m, _ := AlphaBetaModel(one, nil)
	if _, err := m.Seconds(1, 0, 1); err == nil || !strings.Contains(err.Error(), "(1, 0) is not calibrated") {
		t.Errorf("uncalibrated pair: %v", err)
	}
}

// A demand split over two barrier rounds pays α twice under α-β: 0→1 carries 4 + 6 bytes in two
// rounds, (10 + 4) + (10 + 6) = 30 s, where one circuit would take 20 s. The lower bound follows
// the calibration, at one piece: α + β·10 = 20 s (a bound at a bandwidth would not be one here).
func TestAlphaBetaSplitDemandPaysAlphaPerPiece(t *testing.T) {
	s := sched(schedules.Benes, schedules.Barrier, 2, circuit(2, 0, 1, 4, 0, 0), circuit(2, 0, 1, 6, 1, 0))
	m, err := AlphaBetaModel(twoGPUCalibration(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := schedules.DemandFromRows([][]int64{{0, 10}, {0, 0}})
	res, _, err := Run(context.Background(), s, d, Config{Transfer: m, Reconfig: ParallelReconfig(0)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completion != 30 {
		t.Errorf("completion %g, want 30", res.Completion)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "1 demands are split") {
		t.Errorf("notes %q lack the split-demand note", notes)
	}
	if res.Bounds.Bandwidth != 20 || res.Bounds.Reconfig != 20 || res.BoundBandwidth != 0 {
		t.Errorf("bounds %+v at b = %g, want both 20 s from the calibration and no b", res.Bounds, res.BoundBandwidth)
	}
}

func TestMeasuredModel(t *testing.T) {
	tab, err := LoadMeasuredTable("testdata/measured.csv")
	if err != nil {
		t.Fatal(err)
	}
	m := MeasuredModel(tab)
	tests := []struct {
		src, dst int
		bytes    int64
		want     float64
	}{
		{0, 1, 1000, 12e-6},
		{0, 1, 3000, 17e-6}, // two repetitions of one size average
		{0, 1, 2000, 14.5e-6},
		{0, 1, 5000, 22e-6}, // extrapolated along the last segment
		{1, 0, 1000, 5e-6},  // one point: in proportion to bytes
	}
	for _, tc := range tests {
		got, err := m.Seconds(tc.src, tc.dst, tc.bytes)
		if err != nil || !near([]float64{got}, []float64{tc.want}) {
			t.Errorf("(%d→%d, %d B) = %g, %v; want %g", tc.src, tc.dst, tc.bytes, got, err, tc.want)
		}
	}
	if _, err := m.Seconds(2, 3, 1); err == nil || !strings.Contains(err.Error(), "no measurement for pair (2, 3)") {
		t.Errorf("unmeasured pair: %v", err)
	}
}

func TestReadMeasuredTableErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"t.csv", "a,b,c,d\n", "line 1: header must be src,dst,bytes,seconds"},
		{"t.csv", "src,dst,bytes,seconds\n0,1,x,1\n", "line 2, column bytes"},
		{"t.csv", "src,dst,bytes,seconds\n0,1,5,-1\n", "measurements[0]"},
		{"t.csv", "src,dst,bytes,seconds\n0,1,9223372036854775807,1\n", "measurements[0].bytes = 9223372036854775807 is above the limit of 9007199254740992 bytes"},
		{"t.csv", "src,dst,bytes,seconds\n0,1,5,1\n0,1,6,1e308\n", "measurements[1].seconds = 1e+308 s is above the limit"},
		{"t.json", `{"version": 2, "measurements": []}`, "field version: 2"},
		{"t.json", `{"version": 1, "measurements": [{"src": 0, "dst": 1, "bytes": 1, "seconds": 1, "x": 1}]}`, `unknown field "x"`},
	}
	for _, tc := range tests {
		_, err := ReadMeasuredTable(strings.NewReader(tc.text), tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.name) {
			t.Errorf("%s %q: error %v, want %q", tc.name, tc.text, err, tc.want)
		}
	}
	if _, err := LoadMeasuredTable("testdata/none.json"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadMeasuredTableJSON(t *testing.T) {
	tab, err := ReadMeasuredTable(strings.NewReader(`{"version": 1, "measurements": [
		{"src": 2, "dst": 3, "bytes": 100, "seconds": 1e-6}, {"src": 2, "dst": 3, "bytes": 300, "seconds": 2e-6}]}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := MeasuredModel(tab).Seconds(2, 3, 200)
	if err != nil || !near([]float64{got}, []float64{1.5e-6}) {
		t.Errorf("(2→3, 200 B) = %g, %v; want 1.5 µs, halfway between the measurements", got, err)
	}
}
