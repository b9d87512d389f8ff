package emulator

import (
	"github.com/tetris-hil/tetris-hil/schedules"
)

// EndpointTime splits one endpoint's time from 0 to the completion of the whole run.
type EndpointTime struct {
	// Port and Rx name the endpoint: port Port's transmitter, or its receiver when Rx.
	Port int  `json:"port"`
	Rx   bool `json:"rx"`
	// Busy is time spent transmitting (or receiving).
	Busy float64 `json:"busy_seconds"`
	// Reconfiguring is time the endpoint's next circuit had its path free but waited for switch
	// reconfiguration (including waiting for the controller).
	Reconfiguring float64 `json:"reconfiguring_seconds"`
	// Idle is the rest: the "bubbles" of Tetris §2.2 (waiting for a partner endpoint, for a
	// path held by another circuit, for a barrier, or done early).
	Idle float64 `json:"idle_seconds"`
}

// Endpoint names the endpoint as the schedules package does.
func (e EndpointTime) Endpoint() schedules.Endpoint {
	return schedules.Endpoint{Port: e.Port, Rx: e.Rx}
}

// Result summarises one execution of a schedule.
type Result struct {
	Algorithm string `json:"algorithm"`
	// Transfer and Reconfig name the timing models.
	Transfer string `json:"transfer_model"`
	Reconfig string `json:"reconfig_model"`
	// Completion is when the last circuit ended, seconds.
	Completion float64 `json:"completion_seconds"`
	// Bounds are the lower bounds for the demand (zero when Run had no demand).
	Bounds schedules.Bounds `json:"bounds"`
	// BoundBandwidth and BoundReconfig are the b (bytes/s) and α_r (s) the bounds were computed at.
	BoundBandwidth float64 `json:"bound_bandwidth_bytes_per_second,omitempty"`
	BoundReconfig  float64 `json:"bound_reconfig_seconds,omitempty"`
	// RatioBandwidth and RatioReconfig are Completion over each bound (0 without a demand).
	RatioBandwidth float64 `json:"ratio_bandwidth_bound,omitempty"`
	RatioReconfig  float64 `json:"ratio_reconfig_bound,omitempty"`
	// Groups is the number of planning groups (partial mode) or rounds (barrier mode).
	Groups int `json:"groups"`
	// Circuits is the number of circuits executed.
	Circuits int `json:"circuits"`
	// StateChanges counts single switch changes (crossbar: transmitter re-pointings).
	StateChanges int `json:"state_changes"`
	// ReconfigEvents counts reconfiguration commands: changes requested at the same instant are
	// one event (in barrier mode, at most one per round).
	ReconfigEvents int `json:"reconfig_events"`
	// Endpoints has one entry per real transmitter and receiver, transmitters first.
	Endpoints []EndpointTime `json:"endpoints"`
	// RNBWait sums, over circuits, the time their endpoints were both free but their path was not
	// (PathReady − Ready).
	RNBWait float64 `json:"rnb_wait_seconds"`
	// Events is the number of events the emulator processed: circuit completions and single
	// switch (or transmitter) reconfiguration completions.
	Events int      `json:"events"`
	Notes  []string `json:"notes,omitempty"`
}

// LowerBound is the larger of the two bounds.
func (r *Result) LowerBound() float64 { return r.Bounds.Max() }

// Ratio is Completion over the larger lower bound (0 without a demand).
func (r *Result) Ratio() float64 {
	if lb := r.Bounds.Max(); lb > 0 {
		return ratio(r.Completion, lb)
	}
	return 0
}

// Bubbles sums the endpoints' busy, reconfiguring and idle time.
func (r *Result) Bubbles() (busy, reconfiguring, idle float64) {
	for _, e := range r.Endpoints {
		busy += e.Busy
		reconfiguring += e.Reconfiguring
		idle += e.Idle
	}
	return busy, reconfiguring, idle
}
