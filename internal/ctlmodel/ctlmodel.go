// Package ctlmodel is the one timing model of a switch controller (Er-El and Feitelson §2.3.3:
// T_c = T_r + T_w): the emulator's controller model, the fake controller, the board emulator,
// `switch bench` and the live replay's prediction all charge reconfiguration through it, so that
// a prediction and the fakes it is checked against cannot drift apart.
//
// A command of k switch changes is sent to one control station as ⌈k/B⌉ requests of at most B
// changes each (B = 1 is the per-change model; B = 0 means no limit: a command is one request);
// each request holds the station for T_r, and requests are served one at a time in order of
// arrival. The settle time T_w follows a command's last request. Settles of successive commands
// overlap the later commands' requests (the paper's assumption: each requester synchronises by
// itself) unless SerialSettle is set, when the station takes the next command only once the
// previous one has settled (a controller that confirms each command before it takes the next).
//
// Times are float64 seconds on any clock the caller likes (virtual time in the emulator, seconds
// since an epoch on the fakes); this package does no waiting of its own.
package ctlmodel

import (
	"fmt"
	"math"
)

// Model is a controller's timing.
type Model struct {
	// TR is the time one request holds the station (T_r); TW the settle time after a command (T_w).
	TR, TW float64
	// Batch is B, the most changes one request carries; 0 is no limit.
	Batch int
	// SerialSettle makes settles serial: a command's settle time holds the station too.
	SerialSettle bool
}

// MaxSeconds bounds T_r and T_w: a day per request is no switch, and larger values only
// overflow sums later.
const MaxSeconds = 86400

// Validate checks that the times are finite, ≥ 0 and at most MaxSeconds, and that B ≥ 0.
func (m Model) Validate() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"T_r", m.TR}, {"T_w", m.TW}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 || v.x > MaxSeconds {
			return fmt.Errorf("controller model: %s = %v s, want a finite time from 0 to %d s", v.name, v.x, MaxSeconds)
		}
	}
	if m.Batch < 0 {
		return fmt.Errorf("controller model: batch size B = %d, want ≥ 1 (or 0 for no limit)", m.Batch)
	}
	return nil
}

// Requests is the number of requests a command of k changes takes: ⌈k/B⌉, 1 for any k ≥ 1
// when B is 0, and 0 for no change.
func (m Model) Requests(k int) int {
	switch {
	case k <= 0:
		return 0
	case m.Batch <= 0:
		return 1
	}
	return (k + m.Batch - 1) / m.Batch
}

// Busy is how long a command of k changes holds the station with its requests: ⌈k/B⌉·T_r.
func (m Model) Busy(k int) float64 { return float64(m.Requests(k)) * m.TR }

// Cost is how long a command of k changes takes on an idle station: ⌈k/B⌉·T_r + T_w (nothing
// for no change: there is no command).
func (m Model) Cost(k int) float64 {
	if k <= 0 {
		return 0
	}
	return m.Busy(k) + m.TW
}

// Station is the state of one control station: when it can take the next request.
type Station struct {
	m    Model
	free float64
}

// NewStation returns an idle station (free from time 0 on).
func (m Model) NewStation() *Station { return &Station{m: m} }

// Model is the station's timing.
func (s *Station) Model() Model { return s.m }

// Free is when the station can take the next request.
func (s *Station) Free() float64 { return s.free }

// Command queues a command of k changes that arrives at time t (arrivals come in
// non-decreasing t) and returns when its first request starts, when its last request is done
// (the controller has acknowledged it), and when it has settled. A command of no change leaves
// the station as it is and is done when the station is free.
func (s *Station) Command(t float64, k int) (start, acked, settled float64) {
	start = max(t, s.free)
	if k <= 0 {
		return start, start, start
	}
	acked = start + s.m.Busy(k)
	settled = acked + s.m.TW
	s.free = acked
	if s.m.SerialSettle {
		s.free = settled
	}
	return start, acked, settled
}

// RequestDone is when request i (from 0) of a command that started at start is done:
// start + (i+1)·T_r. The fakes log each request's changes as acknowledged then.
func (m Model) RequestDone(start float64, i int) float64 { return start + float64(i+1)*m.TR }

// RequestOf is the request (from 0) that carries change j (from 0) of a command.
func (m Model) RequestOf(j int) int {
	if m.Batch <= 0 {
		return 0
	}
	return j / m.Batch
}
