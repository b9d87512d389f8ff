package schedules

import "fmt"

// Bounds are lower bounds on the completion time of a demand, in seconds.
type Bounds struct {
	// Bandwidth is Tetris §2.3's T_min: the most loaded transmitter or receiver drained at b
	// (LowerBound), or, under another transfer model, the endpoint whose demands take longest to
	// transmit at the least the model allows for them (LowerBoundUnder).
	Bandwidth float64 `json:"bandwidth_bound_seconds"`
	// Reconfig adds reconfiguration: max over endpoints e of load_e/b + d_e·α_r, where d_e is the
	// number of distinct partners of e (a local i→i demand, when the demand counts the diagonal,
	// is a partner that costs nothing; see LowerBound), load_e/b being e's transfer term under
	// the run's transfer model.
	Reconfig float64 `json:"reconfig_bound_seconds"`
}

// Max is the larger (tighter) of the two bounds.
func (b Bounds) Max() float64 { return max(b.Bandwidth, b.Reconfig) }

// LowerBound computes both bounds for demand d at per-port bandwidth (bytes per second) and
// reconfiguration delay alphaR (seconds). Under the controller reconfiguration model (Er-El and
// Feitelson §2.3.3) alphaR is the delay of one command on an idle controller, T_r + T_w: no
// switch change completes sooner after it is asked for.
//
// The reconfiguration-aware bound, max_e (load_e/b + d_e·α_r), holds for every schedule on the
// Beneš fabric and on the crossbar, in partial and in barrier mode, under both reconfiguration
// models. Take a transmitter e (a receiver is the mirror image) and its circuits in the order it
// runs them; one link per endpoint makes their transmissions disjoint, and they carry load_e
// bytes, so they take load_e/b in all. It remains to find d_e disjoint idle gaps of at least α_r
// each at e, before its last circuit ends.
//
//   - Before the first circuit. All switches start in Bar, and with every switch in Bar the Beneš
//     network connects each input port to the output port of the same number: an input switch in
//     Bar sends local port 2j into the upper child at its port j and 2j+1 into the lower child at
//     its port j, the children (by induction, down to one 2×2 switch) keep the number, and an
//     output switch in Bar puts the upper child's port j on 2j and the lower child's on 2j+1. So
//     every path from e to a partner v ≠ e crosses some switch in Cross (the tests check every
//     path of every pair for n ≤ 64, and random ones beyond). That switch was Bar at t = 0; the
//     change that made it Cross started at t ≥ 0 and took α_r, and no circuit uses a switch while
//     it changes. So e's first circuit to another port starts no earlier than α_r. On the
//     crossbar no transmitter points anywhere at t = 0, and pointing one takes α_r.
//   - Between circuits to different partners. Consecutive circuits at e towards v ≠ v' leave e
//     on the same input lane, so their paths share a prefix and then part at a switch entered on
//     the same lane and left on different lanes: one needs it in Bar, the other in Cross. The
//     switch cannot change while the first circuit uses it, so it changes after that circuit ends
//     and before the next starts, which takes at least α_r. (At a receiver the paths meet at a
//     switch entered on different lanes and left on the same one.) On the crossbar a transmitter
//     re-points between them; at a receiver, the first circuit from each new sender needs that
//     sender to point at e, which it did not before (a pointing is made for a circuit), and the
//     re-pointing waits for e's previous circuit to end.
//
// Over e's sequence of circuits its partner changes d_e − 1 times at least, and the first gap
// comes on top: d_e gaps. Barrier rounds only add waiting. A counted local demand e→e needs no
// Cross switch when it runs first (the all-Bar path), so for an endpoint with one only d_e − 1
// gaps are certain on the Beneš fabric; LowerBound charges it d_e − 1 on both fabrics.
func LowerBound(d *Demand, bandwidth, alphaR float64) Bounds {
	b, _ := lowerBound(d, alphaR, func(e int, rx bool) (float64, error) {
		if rx {
			return float64(d.ColLoad(e)) / bandwidth, nil
		}
		return float64(d.RowLoad(e)) / bandwidth, nil
	})
	return b
}

// PairLower is a transfer model's lower bound on moving bytes (> 0) from src to dst: no set of
// circuits src→dst whose sizes add up to bytes transmits for less time in all, however many
// pieces the bytes are split into (a circuit of 0 bytes counts as one that takes no time).
type PairLower func(src, dst int, bytes int64) (float64, error)

// LowerBoundUnder is LowerBound for any transfer model: endpoint e's transfer term load_e/b
// becomes Σ_j lower(e, j, D_ej) over its partners (a receiver's over its senders). The proof of
// LowerBound uses the transfer term only as "e's circuits, disjoint in time, transmit this long in
// all": e's circuits to partner j are pieces whose sizes add up to D_ej (every byte delivered
// exactly once), so by the definition of PairLower they transmit for at least lower(e, j, D_ej),
// and the gaps argument does not look at transfer times. Under an α-β model with α ≥ 0 and β ≥ 0
// a pair's lower term is α + β·D_ej: k pieces cost k·α + β·D_ej ≥ α + β·D_ej, k ≥ 1 (see
// emulator.TransferModel's MinSeconds for each model's proof). An error from lower is returned
// with the pair named.
func LowerBoundUnder(d *Demand, lower PairLower, alphaR float64) (Bounds, error) {
	n := d.N()
	return lowerBound(d, alphaR, func(e int, rx bool) (float64, error) {
		var t float64
		for j := 0; j < n; j++ {
			src, dst := e, j
			if rx {
				src, dst = j, e
			}
			if v := d.At(src, dst); v > 0 {
				x, err := lower(src, dst, v)
				if err != nil {
					return 0, fmt.Errorf("lower bound: pair (%d, %d), %d bytes: %w", src, dst, v, err)
				}
				t += x
			}
		}
		return t, nil
	})
}

// lowerBound is the loop of both bounds: transfer(e, rx) is the least time endpoint e (its
// receiver when rx) transmits in all.
func lowerBound(d *Demand, alphaR float64, transfer func(e int, rx bool) (float64, error)) (Bounds, error) {
	var b Bounds
	n := d.N()
	for e := 0; e < n; e++ {
		for _, rx := range []bool{false, true} {
			deg := d.RowDegree(e)
			if rx {
				deg = d.ColDegree(e)
			}
			if deg == 0 {
				continue
			}
			gaps := deg
			if d.At(e, e) > 0 {
				gaps-- // the local demand may run first, on the all-Bar path
			}
			t, err := transfer(e, rx)
			if err != nil {
				return Bounds{}, err
			}
			b.Bandwidth = max(b.Bandwidth, t)
			b.Reconfig = max(b.Reconfig, t+float64(gaps)*alphaR)
		}
	}
	return b, nil
}
