package schedules

// Bounds are lower bounds on the completion time of a demand, in seconds.
type Bounds struct {
	// Bandwidth is seed 000 §2.3's T_min: the most loaded transmitter or receiver drained at b.
	Bandwidth float64 `json:"bandwidth_bound_seconds"`
	// Reconfig adds reconfiguration: max over endpoints e of load_e/b + (d_e − 1)·α_r, where d_e
	// is the number of distinct partners of e.
	//
	// Why it holds: e's circuits to distinct partners cannot overlap (one link per endpoint), so
	// they run one after another. Two consecutive ones at a transmitter leave the same input lane
	// towards different outputs, so their paths diverge at some switch entered on the same lane and
	// left on different lanes: that switch must change state, which it cannot do while the first
	// circuit still uses it, and a change takes α_r. At a receiver the paths converge at a switch
	// entered on different lanes and left on the same lane, with the same argument; on a crossbar
	// the transmitter must re-point. So e's d_e circuits are separated by at least d_e − 1
	// reconfigurations. The first needs none (all switches start in Bar, which may suit it).
	Reconfig float64 `json:"reconfig_bound_seconds"`
}

// Max is the larger (tighter) of the two bounds.
func (b Bounds) Max() float64 { return max(b.Bandwidth, b.Reconfig) }

// LowerBound computes both bounds for demand d at per-port bandwidth (bytes per second) and
// reconfiguration delay alphaR (seconds).
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
			t := float64(load) / bandwidth
			b.Bandwidth = max(b.Bandwidth, t)
			b.Reconfig = max(b.Reconfig, t+float64(deg-1)*alphaR)
		}
	}
	return b
}
