package emulator_test

import (
	"context"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// TestNoSchedulerBeatsTheLowerBound: for random skewed demands (padding included, sometimes
// with counted local demand), every registered scheduler, on the Beneš fabric and the crossbar,
// under parallel and controller reconfiguration, and under every kind of transfer model (bytes/b,
// a one-line α-β calibration, a piecewise one whose later pieces cut the axis below zero, a
// measured table that interpolates and extrapolates), executes no sooner than the run's own lower
// bound (max_e Σ_j MinSeconds(e, j, D_ej) + d_e·α_r, α_r the model's one-command delay). Under
// bytes/b and a one-line α-β model with α ≥ 0 the test computes the bound itself from the papers'
// terms (load/b; Σ_j α_ej + β_ej·D_ej) and checks the run's equals it. The bound is tight on some
// demands (a permutation: one circuit per endpoint, α_r + bytes/b), so a regression that charged
// one α_r too many would fail here on those, and one that let a circuit skip its first switch
// change, or charged a split demand its whole size's time, would fail the other way.
func TestNoSchedulerBeatsTheLowerBound(t *testing.T) {
	names := schedules.Names()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 8).Draw(t, "n")
		d := schedules.NewDemand(n)
		d.CountDiagonal = rapid.Float64Range(0, 1).Draw(t, "local") < 0.2
		hot := rapid.IntRange(0, n-1).Draw(t, "hot")
		density := rapid.Float64Range(0.1, 1).Draw(t, "density")
		for i := range n {
			for j := range n {
				if rapid.Float64Range(0, 1).Draw(t, "p") > density {
					continue
				}
				b := rapid.Int64Range(1, 32<<20).Draw(t, "bytes")
				if j == hot {
					b *= 4
				}
				d.Bytes[i][j] = b
			}
		}
		if d.Total() == 0 {
			d.Bytes[0][n-1] = 1 << 20
		}
		alpha := rapid.SampledFrom([]float64{0, 10e-9, 1e-6, 10e-6, 1e-3}).Draw(t, "α_r")
		fabric := rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")
		const bw = 100e9
		tm, want := drawTransferModel(t, n, bw)
		models := []emulator.ReconfigModel{emulator.ParallelReconfig(alpha), emulator.ControllerReconfig(alpha/4, alpha/2)}
		// A measured table whose times fall with size extrapolates to 0 s beyond its sizes, so
		// a demand can legitimately cost nothing; the bound must be positive whenever some
		// demanded pair has a positive least time.
		anyPositive := false
		for i := range n {
			for j := range n {
				if d.Bytes[i][j] == 0 || (i == j && !d.CountDiagonal) {
					continue
				}
				if m, err := tm.MinSeconds(i, j, d.Bytes[i][j]); err == nil && m > 0 {
					anyPositive = true
				}
			}
		}
		for _, name := range names {
			sch, _ := schedules.Lookup(name)
			s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, Fabric: fabric})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, rc := range models {
				// Run itself refuses a completion below the bound; this names what went wrong.
				res, _, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: tm, Reconfig: rc})
				if err != nil {
					t.Fatalf("%s on %s, %s, %s: %v", name, fabric, tm.Name(), rc.Name(), err)
				}
				lb := res.Bounds
				if !(lb.Bandwidth > 0 || !anyPositive) || lb.Reconfig < lb.Bandwidth {
					t.Fatalf("%s, %s: bounds %+v, want a positive bandwidth bound below the reconfiguration-aware one", name, tm.Name(), lb)
				}
				if res.Completion < lb.Max()*(1-1e-9) || (lb.Max() > 0 && res.Ratio() < 1-1e-9) {
					t.Fatalf("%s on %s, %s, %s: completion %g s beats the lower bound %g s (%+v)",
						name, fabric, tm.Name(), rc.Name(), res.Completion, lb.Max(), lb)
				}
				if want != nil {
					wb := paperBound(d, want, rc.Nominal())
					if math.Abs(wb.Bandwidth-lb.Bandwidth) > 1e-12*wb.Bandwidth || math.Abs(wb.Reconfig-lb.Reconfig) > 1e-12*wb.Reconfig {
						t.Fatalf("%s, %s: bounds %+v, want %+v from the pair terms", name, tm.Name(), lb, wb)
					}
				}
			}
		}
	})
}

// drawTransferModel draws one transfer model of each kind for n ports. want, when not nil, is
// the per-pair term the papers' bound charges under it (bytes/b; α + β·bytes), for a check
// independent of MinSeconds.
func drawTransferModel(t *rapid.T, n int, bw float64) (emulator.TransferModel, func(src, dst int, bytes int64) float64) {
	kind := rapid.SampledFrom([]string{"bandwidth", "alphabeta", "piecewise", "measured"}).Draw(t, "transfer model")
	switch kind {
	case "bandwidth":
		return emulator.BandwidthModel(bw), func(_, _ int, b int64) float64 { return float64(b) / bw }
	case "measured":
		var tab emulator.MeasuredTable
		tab.Version = emulator.MeasuredFormatVersion
		for i := range n {
			for j := range n {
				for range rapid.IntRange(1, 4).Draw(t, "sizes") {
					tab.Measurements = append(tab.Measurements, emulator.Measurement{Src: i, Dst: j,
						Bytes:   rapid.Int64Range(1, 200<<20).Draw(t, "measured bytes"),
						Seconds: rapid.Float64Range(1e-6, 5e-3).Draw(t, "measured seconds")})
				}
			}
		}
		return emulator.MeasuredModel(&tab), nil
	}
	c := &model.Calibration{Version: model.FormatVersion}
	for g := range n {
		c.Inventory.GPUs = append(c.Inventory.GPUs, model.GPU{Index: g, Name: "g"})
	}
	for i := range n {
		for j := range n {
			p := model.PairFit{Src: i, Dst: j, Alpha: rapid.Float64Range(0, 30e-6).Draw(t, "α"),
				Beta: 1 / rapid.Float64Range(20e9, 400e9).Draw(t, "1/β"), R2: 1}
			if kind == "piecewise" {
				// From a knee on, a faster line whose intercept may be negative: a split there
				// can cost less than the whole demand's own time.
				knee := rapid.Int64Range(1, 64<<20).Draw(t, "knee")
				beta2 := p.Beta * rapid.Float64Range(0.1, 1).Draw(t, "β2/β")
				floor := 1e-7 - beta2*float64(knee) // the line must be positive at the knee
				alpha2 := rapid.Float64Range(floor, 30e-6).Draw(t, "α2")
				p.Pieces = []model.Piece{{Alpha: p.Alpha, Beta: p.Beta, R2: 1},
					{FromBytes: knee, Alpha: alpha2, Beta: beta2, R2: 1}}
			}
			c.Pairs = append(c.Pairs, p)
		}
	}
	m, err := emulator.AlphaBetaModel(c, nil)
	if err != nil {
		t.Fatalf("calibration: %v", err)
	}
	if kind == "piecewise" {
		return m, nil
	}
	fit := func(src, dst int) model.PairFit { return c.Pairs[src*n+dst] }
	return m, func(src, dst int, b int64) float64 { f := fit(src, dst); return f.Alpha + f.Beta*float64(b) }
}

// paperBound is the bound as the issue of honest bounds states it, computed without
// schedules.LowerBoundUnder: each endpoint needs Σ_j term(e, j, D_ej), plus α_r per partner
// (one fewer with a counted local demand).
func paperBound(d *schedules.Demand, term func(src, dst int, bytes int64) float64, alphaR float64) schedules.Bounds {
	var b schedules.Bounds
	n := d.N()
	for e := range n {
		var tx, rx float64
		var dtx, drx int
		for j := range n {
			if v := d.At(e, j); v > 0 {
				tx += term(e, j, v)
				dtx++
			}
			if v := d.At(j, e); v > 0 {
				rx += term(j, e, v)
				drx++
			}
		}
		local := 0
		if d.At(e, e) > 0 {
			local = 1
		}
		for _, x := range []struct {
			t   float64
			deg int
		}{{tx, dtx}, {rx, drx}} {
			if x.deg > 0 {
				b.Bandwidth = max(b.Bandwidth, x.t)
				b.Reconfig = max(b.Reconfig, x.t+float64(x.deg-local)*alphaR)
			}
		}
	}
	return b
}

// TestLowerBoundTightOnAPermutation: a permutation needs one circuit per endpoint, and the best
// schedule starts each after one switch change: completion α_r + max bytes/b, which is the bound.
// Tetris reaches it on both fabrics, so the bound charges no reconfiguration too many.
func TestLowerBoundTightOnAPermutation(t *testing.T) {
	d := schedules.NewDemand(8)
	for i := range 8 {
		d.Bytes[i][(i+3)%8] = int64(1+i) << 20
	}
	const bw, alpha = 100e9, 10e-6
	for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
		sch, _ := schedules.Lookup("tetris")
		s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, Fabric: fabric})
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: emulator.BandwidthModel(bw), Reconfig: emulator.ParallelReconfig(alpha)})
		if err != nil {
			t.Fatal(err)
		}
		want := alpha + float64(8<<20)/bw
		if lb := res.Bounds.Max(); lb != want || res.Completion > want*(1+1e-12) {
			t.Errorf("%s: completion %g s, bound %g s, want both %g s", fabric, res.Completion, lb, want)
		}
	}
}

// TestSplitLowerBoundByPartition checks MinSeconds against its definition on small sizes, for
// measured tables (interpolated and extrapolated, clamped at 0) and piecewise α-β fits: for
// every D ≤ 22 it is at most the least total time of every partition of D into pieces (all
// 1,002 of 22 among them), and equal to D·min_{1≤m≤D} T(m)/m over every m, not only the
// candidate sizes it looks at.
func TestSplitLowerBoundByPartition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tm emulator.TransferModel
		if rapid.Bool().Draw(t, "measured") {
			var tab emulator.MeasuredTable
			for range rapid.IntRange(1, 4).Draw(t, "sizes") {
				tab.Measurements = append(tab.Measurements, emulator.Measurement{Src: 0, Dst: 1,
					Bytes: rapid.Int64Range(1, 30).Draw(t, "bytes"), Seconds: rapid.Float64Range(0, 10).Draw(t, "seconds")})
			}
			tm = emulator.MeasuredModel(&tab)
		} else {
			knee := rapid.Int64Range(1, 25).Draw(t, "knee")
			beta2 := rapid.Float64Range(0.01, 2).Draw(t, "β2")
			p := model.PairFit{Src: 0, Dst: 1, Alpha: rapid.Float64Range(0, 10).Draw(t, "α"), Beta: rapid.Float64Range(0.01, 2).Draw(t, "β"), R2: 1}
			p.Pieces = []model.Piece{{Alpha: p.Alpha, Beta: p.Beta, R2: 1},
				{FromBytes: knee, Alpha: rapid.Float64Range(0.01-beta2*float64(knee), 10).Draw(t, "α2"), Beta: beta2, R2: 1}}
			c := &model.Calibration{Version: model.FormatVersion, Pairs: []model.PairFit{p},
				Inventory: model.Inventory{GPUs: []model.GPU{{Index: 0}, {Index: 1}}}}
			var err error
			if tm, err = emulator.AlphaBetaModel(c, nil); err != nil {
				t.Fatal(err)
			}
		}
		T := func(m int64) float64 {
			x, err := tm.Seconds(0, 1, m)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		// best[D] is the least Σ T over the partitions of D (unbounded knapsack).
		const top = 22
		best := make([]float64, top+1)
		for D := int64(1); D <= top; D++ {
			best[D] = math.Inf(1)
			for m := int64(1); m <= D; m++ {
				best[D] = min(best[D], T(m)+best[D-m])
			}
			lb, err := tm.MinSeconds(0, 1, D)
			if err != nil {
				t.Fatal(err)
			}
			if lb > best[D]*(1+1e-12)+1e-15 {
				t.Fatalf("D = %d: MinSeconds %g above the best split's %g", D, lb, best[D])
			}
			rate := math.Inf(1)
			for m := int64(1); m <= D; m++ {
				rate = min(rate, max(T(m), 0)/float64(m))
			}
			if want := rate * float64(D); math.Abs(lb-want) > 1e-9*want+1e-15 {
				t.Fatalf("D = %d: MinSeconds %g, want D·min T(m)/m = %g", D, lb, want)
			}
		}
	})
}

// A measured table that rises steeply at the demand's own size: 0→1 sends 3 MB, measured at
// 6 ms, but in two barrier rounds of 2 MB (1.5 ms) and 1 MB (1 ms) it takes 2.5 ms. The table's
// time for 3 MB is no lower bound here; the best rate, 0.75 ms/MB at 2 MB, is: 2.25 ms.
func TestLowerBoundMeasuredSplit(t *testing.T) {
	const mb = 1 << 20
	tab := &emulator.MeasuredTable{Version: emulator.MeasuredFormatVersion, Measurements: []emulator.Measurement{
		{Src: 0, Dst: 1, Bytes: 1 * mb, Seconds: 1e-3}, {Src: 0, Dst: 1, Bytes: 2 * mb, Seconds: 1.5e-3}, {Src: 0, Dst: 1, Bytes: 3 * mb, Seconds: 6e-3}}}
	d, _ := schedules.DemandFromRows([][]int64{{0, 3 * mb}, {0, 0}})
	f, _ := benes.New(2)
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "hand", N: 2, Ports: 2, Fabric: schedules.Benes, Mode: schedules.Barrier,
		Circuits: []schedules.Circuit{{Src: 0, Dst: 1, Bytes: 2 * mb, Group: 0, Path: f.NewPath(0, 1, 0)}, {Src: 0, Dst: 1, Bytes: 1 * mb, Group: 1, Path: f.NewPath(0, 1, 0)}},
		Params:   schedules.Params{BandwidthBytesPerSecond: 1e9}}
	res, _, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: emulator.MeasuredModel(tab), Reconfig: emulator.ParallelReconfig(0)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Completion-2.5e-3) > 1e-15 || math.Abs(res.Bounds.Bandwidth-2.25e-3) > 1e-15 {
		t.Errorf("completion %g s, bandwidth bound %g s; want 2.5 ms and 2.25 ms", res.Completion, res.Bounds.Bandwidth)
	}
}
