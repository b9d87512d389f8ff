package schedules

// Bounds are lower bounds on the completion time of a demand, in seconds.
type Bounds struct {
	// Bandwidth is Tetris §2.3's T_min: the most loaded transmitter or receiver drained at b.
	Bandwidth float64 `json:"bandwidth_bound_seconds"`
	// Reconfig adds reconfiguration: max over endpoints e of load_e/b + d_e·α_r, where d_e is the
	// number of distinct partners of e (a local i→i demand, when the demand counts the diagonal,
	// is a partner that costs nothing; see LowerBound).
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
	var b Bounds
	n := d.N()
	for e := 0; e < n; e++ {
		for _, rx := range []bool{false, true} {
			var load int64
			var deg int
			if rx {
				load, deg = d.ColLoad(e), d.ColDegree(e)
			} else {
				load, deg = d.RowLoad(e), d.RowDegree(e)
			}
			if deg == 0 {
				continue
			}
			gaps := deg
			if d.At(e, e) > 0 {
				gaps-- // the local demand may run first, on the all-Bar path
			}
			t := float64(load) / bandwidth
			b.Bandwidth = max(b.Bandwidth, t)
			b.Reconfig = max(b.Reconfig, t+float64(gaps)*alphaR)
		}
	}
	return b
}
