package calibrate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
)

// drawMedians times sizes from src to dst on an in-process fake engine (the same engine the
// workers run) and summarises each size, as a calibration does.
func drawMedians(t testing.TB, m fake.Model, src, dst int, sizes []int64, reps int) []model.Median {
	t.Helper()
	ctx := context.Background()
	eng, err := transfer.Open(ctx, "fake", transfer.Config{Device: transfer.Device{GPU: src}, Options: m.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	buf, err := eng.Peer(ctx, transfer.Device{GPU: dst}, sizes[len(sizes)-1])
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Median
	for _, n := range sizes {
		tm, err := eng.Copy(ctx, buf, transfer.Copy{Bytes: n, Reps: reps, Warmup: 2, Kind: transfer.CE})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Summarize(n, tm.Times))
	}
	return out
}

// TestFitRecoversFakeModel is the acceptance test of the fit: on fake devices with α = 7 µs and
// 250 GB/s (pairs spread ±5 % around them), seeded noise (σ 2 % per copy) and outliers (1 % of
// copies 2–3× slow), plus two medians per pair made 60 % slow by hand, the fit recovers every one
// of the 56 pairs' α within 2 % and β within 1 %, over several seeds, and names the two planted
// medians as outliers.
func TestFitRecoversFakeModel(t *testing.T) {
	sizes, err := GeometricSizes(4<<10, 1<<30, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3, 17} {
		m := fake.Defaults
		m.Alpha, m.Bandwidth, m.Seed = 7e-6, 250e9, seed
		rng := rand.New(rand.NewPCG(seed, 99))
		worstA, worstB := 0.0, 0.0
		for src := range 8 {
			for dst := range 8 {
				if src == dst {
					continue
				}
				ms := drawMedians(t, m, src, dst, sizes, 15)
				planted := map[int64]bool{}
				for len(planted) < 2 {
					i := rng.IntN(len(ms))
					if !planted[ms[i].Bytes] {
						ms[i].Seconds *= 1.6
						planted[ms[i].Bytes] = true
					}
				}
				f, err := Fit(ms, FitOptions{})
				if err != nil {
					t.Fatal(err)
				}
				alpha, bw := m.Pair(src, dst)
				ea, eb := math.Abs(f.Alpha/alpha-1), math.Abs(f.Beta*bw-1)
				worstA, worstB = max(worstA, ea), max(worstB, eb)
				if ea > 0.02 || eb > 0.01 || len(f.Pieces) != 0 {
					t.Errorf("seed %d pair %d→%d: α %.4g (true %.4g, %.2f%%), β %.4g (true %.4g, %.2f%%), %d pieces",
						seed, src, dst, f.Alpha, alpha, 100*ea, f.Beta, 1/bw, 100*eb, len(f.Pieces))
				}
				for b := range planted {
					if !containsInt64(f.Outliers, b) {
						t.Errorf("seed %d pair %d→%d: planted outlier at %d bytes kept (outliers %v)", seed, src, dst, b, f.Outliers)
					}
				}
				if f.R2 < 0.99 || f.TheilSen == nil || math.Abs(f.TheilSen.Beta*bw-1) > 0.02 || math.Abs(f.MStar-f.Alpha/f.Beta) > 1e-6*f.MStar {
					t.Errorf("seed %d pair %d→%d: R² %.5f, Theil–Sen %+v, m* %g", seed, src, dst, f.R2, f.TheilSen, f.MStar)
				}
			}
		}
		t.Logf("seed %d: worst α error %.3f%%, worst β error %.3f%% over 56 pairs", seed, 100*worstA, 100*worstB)
	}
}

// TestFitFindsPlantedKnee plants a protocol change (bandwidth halves past 1 MiB or 64 MiB, or
// doubles past 4 MiB): the fit must split there, each piece recovering its own line.
func TestFitFindsPlantedKnee(t *testing.T) {
	sizes, _ := GeometricSizes(4<<10, 1<<30, 4)
	for _, tc := range []struct {
		knee   int64
		factor float64
	}{{1 << 20, 0.5}, {64 << 20, 0.5}, {4 << 20, 2}} {
		knee := tc.knee
		m := fake.Defaults
		m.Alpha, m.Bandwidth, m.KneeBytes, m.KneeFactor = 7e-6, 250e9, knee, tc.factor
		f, err := Fit(drawMedians(t, m, 0, 1, sizes, 15), FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Pieces) != 2 {
			t.Fatalf("knee at %d: %d pieces, want 2 (max rel residual %.3g)", knee, len(f.Pieces), f.MaxRelResidual)
		}
		alpha, bw := m.Pair(0, 1)
		p0, p1 := f.Pieces[0], f.Pieces[1]
		if r := float64(p1.FromBytes) / float64(knee); r < 0.9 || r > 1.1 {
			t.Errorf("knee at %d bytes found at %d (pieces %+v)", knee, p1.FromBytes, f.Pieces)
		}
		// Below a 1 MiB knee β·m is at most a third of the time, so the first piece's β is known
		// to a few per cent only; α and the second piece's β are sharp.
		if math.Abs(p0.Alpha/alpha-1) > 0.02 || math.Abs(p0.Beta*bw-1) > 0.05 || math.Abs(p1.Beta*bw*tc.factor-1) > 0.01 {
			t.Errorf("knee at %d: pieces %+v; want α %.4g, β %.4g then %.4g", knee, f.Pieces, alpha, 1/bw, 1/(bw*tc.factor))
		}
		if f.Bandwidth != 1/p1.Beta || f.MaxRelResidual > 0.03 {
			t.Errorf("knee at %d: bandwidth %g, max residual %g; pieces %+v, outliers %v", knee, f.Bandwidth, f.MaxRelResidual, f.Pieces, f.Outliers)
		}
		// The pair's model predicts by piece: past the knee the second line.
		if got, want := f.Seconds(1<<30), p1.Alpha+p1.Beta*(1<<30); got != want {
			t.Errorf("T(1 GiB) = %g, want the second piece's %g", got, want)
		}
	}
}

func TestFitErrors(t *testing.T) {
	tests := []struct {
		name string
		ms   []model.Median
		want string
	}{
		{"two points", []model.Median{{Bytes: 1, Seconds: 1}, {Bytes: 2, Seconds: 2}}, "fewer than 3"},
		{"zero time", []model.Median{{Bytes: 1, Seconds: 1}, {Bytes: 2, Seconds: 0}, {Bytes: 3, Seconds: 3}}, "positive sizes and times"},
		{"flat", []model.Median{{Bytes: 1 << 10, Seconds: 3e-6}, {Bytes: 1 << 20, Seconds: 2e-6}, {Bytes: 1 << 30, Seconds: 1e-6}}, "does not grow with the size"},
	}
	for _, tt := range tests {
		if _, err := Fit(tt.ms, FitOptions{}); err == nil || !contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// TestFitExactLine: noise-free points on a line come back exactly, with R² 1 and no outliers.
func TestFitExactLine(t *testing.T) {
	var ms []model.Median
	for _, n := range []int64{4096, 65536, 1 << 20, 16 << 20, 256 << 20} {
		ms = append(ms, model.Median{Bytes: n, Seconds: 5e-6 + float64(n)/100e9})
	}
	f, err := Fit(ms, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Alpha/5e-6-1) > 1e-9 || math.Abs(f.Beta*100e9-1) > 1e-9 || f.R2 < 1-1e-12 || len(f.Outliers) != 0 {
		t.Errorf("fit %+v", f)
	}
	if math.Abs(f.MStar-5e-6*100e9) > 1e-3 {
		t.Errorf("m* = %g, want α/β = 500000 bytes", f.MStar)
	}
}

func TestSummarize(t *testing.T) {
	us := time.Microsecond
	m := Summarize(4096, []time.Duration{5 * us, 1 * us, 3 * us, 2 * us, 4 * us})
	if m.Seconds != 3e-6 || m.Min != 1e-6 || m.Max != 5e-6 || m.P25 != 2e-6 || m.P75 != 4e-6 || m.Repetitions != 5 {
		t.Errorf("Summarize = %+v", m)
	}
}

func containsInt64(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// BenchmarkFit56x40 fits 56 pairs of 40 sizes each, as a full 8-GPU calibration does; the target
// is 10 ms on one core.
func BenchmarkFit56x40(b *testing.B) {
	sizes, _ := GeometricSizes(4<<10, 1<<30, 40.0/18)
	sizes = sizes[:40]
	m := fake.Defaults
	var pairs [][]model.Median
	for src := range 8 {
		for dst := range 8 {
			if src != dst {
				pairs = append(pairs, drawMedians(b, m, src, dst, sizes, 9))
			}
		}
	}
	if len(pairs) != 56 || len(pairs[0]) != 40 {
		b.Fatalf("%d pairs of %d sizes", len(pairs), len(pairs[0]))
	}
	// The machine this runs on is shared: besides wall time, report the CPU time this process
	// spent per fit of all 56 pairs, which other processes do not inflate.
	cpu0 := cpuTime()
	n := 0
	for b.Loop() {
		for _, ms := range pairs {
			if _, err := Fit(ms, FitOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ExampleFit() {
	var ms []model.Median
	for _, n := range []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20} {
		ms = append(ms, model.Median{Bytes: n, Seconds: 7e-6 + float64(n)/250e9}) // 7 µs + 250 GB/s
	}
	ms[2].Seconds *= 1.5 // one bad median
	f, _ := Fit(ms, FitOptions{})
	fmt.Printf("α %.2f µs, %.0f GB/s, outliers %v\n", f.Alpha*1e6, f.Bandwidth/1e9, f.Outliers)
	// Output: α 7.00 µs, 250 GB/s, outliers [1048576]
}
