package holo

import (
	"fmt"
	"math"
)

// DefaultHeader is the header size H in bytes: the per-stage header cost is H·T_d, and H = 1
// gives the paper's per-stage T_d (Er-El and Feitelson §3.1.3).
const DefaultHeader = 1

// MaxNodes bounds N so that a plan and its events fit comfortably in memory.
const MaxNodes = 1 << 16

// Params are the model's parameters (Er-El and Feitelson §2.3.2). Times are seconds, per-byte
// costs seconds per byte.
type Params struct {
	// Nodes is N, the number of nodes (at least 2).
	Nodes int `json:"nodes"`
	// TR is the time of one configuration request at the control station (serialised); TW the
	// settle time after it (overlapping). T_c = T_r + T_w.
	TR float64 `json:"t_r_seconds"`
	TW float64 `json:"t_w_seconds"`
	// TB is the time per byte through the software stack, TF the time per byte through the
	// forwarding unit; T_d = T_b − T_f.
	TB float64 `json:"t_b_seconds_per_byte"`
	TF float64 `json:"t_f_seconds_per_byte"`
	// Size is the message size S in bytes; Header the header size H in bytes (H·T_d per stage).
	Size   int64 `json:"size_bytes"`
	Header int64 `json:"header_bytes"`
	// Multicast is m, the most destinations one configuration entry may have (0 means 1); the
	// broadcast algorithms use m = 1 (§3).
	Multicast int `json:"multicast,omitempty"`
}

// M is the multicast size m, at least 1.
func (p Params) M() int { return max(1, p.Multicast) }

// TC is the configuration time T_c = T_r + T_w.
func (p Params) TC() float64 { return p.TR + p.TW }

// TD is T_d = T_b − T_f, the per-byte cost of the software stack above the FU.
func (p Params) TD() float64 { return p.TB - p.TF }

// S is the message size as a float, for the cost formulas.
func (p Params) S() float64 { return float64(p.Size) }

// H is the header size as a float.
func (p Params) H() float64 { return float64(p.Header) }

// HeaderCost is H·T_d: the time for a received packet's header to reach the software.
func (p Params) HeaderCost() float64 { return p.H() * p.TD() }

// Validate checks the parameters; the error names the field and the value.
func (p Params) Validate() error {
	if p.Nodes < 2 || p.Nodes > MaxNodes {
		return fmt.Errorf("nodes: %d, want 2..%d", p.Nodes, MaxNodes)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"t_r", p.TR}, {"t_w", p.TW}, {"t_b", p.TB}, {"t_f", p.TF}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("%s: %v, want a finite time ≥ 0", v.name, v.x)
		}
	}
	if p.TF <= 0 {
		return fmt.Errorf("t_f: %v s per byte, want > 0 (forwarding is never free)", p.TF)
	}
	if p.TB < p.TF {
		return fmt.Errorf("t_b: %v s per byte is below t_f %v: the stack cannot be faster than the forwarding unit (T_d = T_b − T_f ≥ 0)", p.TB, p.TF)
	}
	if p.Size < 1 {
		return fmt.Errorf("size: %d bytes, want ≥ 1", p.Size)
	}
	if p.Multicast < 0 || p.Multicast >= p.Nodes {
		return fmt.Errorf("multicast: %d, want 1..N−1 = %d (0 means 1)", p.Multicast, p.Nodes-1)
	}
	if p.Header < 0 || p.Header > p.Size {
		return fmt.Errorf("header: %d bytes, want 0..size (%d)", p.Header, p.Size)
	}
	return nil
}

// K is the number of ring forwards that overlap one configuration change in the tree embedded in
// a ring (Er-El and Feitelson §3.1.4): k = (H·T_d + T_c)/(S·T_f) + 1, rounded down, at most N − 1.
func (p Params) K() int {
	k := math.Floor((p.HeaderCost()+p.TC())/(p.S()*p.TF)) + 1
	if k > float64(p.Nodes-1) || math.IsNaN(k) {
		return max(1, p.Nodes-1)
	}
	return int(k)
}
