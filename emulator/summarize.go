package emulator

import (
	"fmt"
	"slices"

	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Summarize turns the timeline of one execution of s into its Result: completion, lower bounds
// for d (nil: none) and the ratios to them, per-endpoint busy, reconfiguring and idle time, the
// time lost to RNB conflicts, and notes on what the models imply. c is what the walk counted
// (Walker.Counts); cfg names the timing models and gives the bound bandwidth (Config). The
// emulator summarises its runs with it, and a live runner its measured timelines, so that both
// report the same quantities computed the same way.
func Summarize(s *schedules.Schedule, d *schedules.Demand, tl *schedules.Timeline, cfg Config, c Counts) *Result {
	r := newSummary(s, d, cfg, c)
	for i := range tl.Circuits {
		r.add(s, i, &tl.Circuits[i])
	}
	return r.finish(s, d, cfg)
}

// summary is a Result being filled one circuit timing at a time: from a timeline (Summarize) or
// straight from a walk (a result-only run), with the same numbers in the same order.
type summary struct {
	*Result
	// ports are the ports listed in Endpoints, in order, where not every real port is (a
	// port's entry is found by binary search); nil: port p is entry p.
	ports []int
}

// newSummary lists, in Endpoints, every real port of the demand, or without a demand the ports
// that some circuit uses: a schedule file alone says only how many ports the fabric has (up to
// 2^20), and a port no circuit and no demand uses has nothing to report (README, Limits).
func newSummary(s *schedules.Schedule, d *schedules.Demand, cfg Config, c Counts) summary {
	r := &Result{
		Algorithm:      s.Algorithm,
		Transfer:       cfg.Transfer.Name(),
		Reconfig:       cfg.Reconfig.Name(),
		Groups:         s.Groups(),
		Circuits:       len(s.Circuits),
		StateChanges:   c.StateChanges,
		ReconfigEvents: c.ReconfigEvents,
		Events:         c.Events,
	}
	if s.Mode == schedules.Barrier {
		r.Groups = c.Rounds
	}
	var ps []int
	if d == nil {
		// The circuits' real ports, sorted and without repeats: memory by circuits, not ports.
		ps = make([]int, 0, 2*len(s.Circuits))
		for i := range s.Circuits {
			for _, p := range [2]int{s.Circuits[i].Src, s.Circuits[i].Dst} {
				if p < s.Ports {
					ps = append(ps, p)
				}
			}
		}
		slices.Sort(ps)
		if ps = slices.Compact(ps); len(ps) == s.Ports {
			ps = nil // every port is used: the identity
		}
	}
	n := s.Ports
	if ps != nil {
		n = len(ps)
	}
	r.Endpoints = make([]EndpointTime, 2*n)
	for i := range n {
		p := i
		if ps != nil {
			p = ps[i]
		}
		r.Endpoints[i].Port = p
		r.Endpoints[n+i].Port, r.Endpoints[n+i].Rx = p, true
	}
	return summary{r, ps}
}

// entry is the index of port p's transmitter entry in Endpoints.
func (r summary) entry(p int) int {
	if r.ports == nil {
		return p
	}
	i, _ := slices.BinarySearch(r.ports, p)
	return i
}

// add counts circuit i's timing.
func (r summary) add(s *schedules.Schedule, i int, ct *schedules.CircuitTiming) {
	r.addCircuit(s, &s.Circuits[i], ct)
}

// addCircuit counts the timing of circuit c of s (whose circuits it need not hold).
func (r summary) addCircuit(s *schedules.Schedule, c *schedules.Circuit, ct *schedules.CircuitTiming) {
	r.Completion = max(r.Completion, ct.End) // as Timeline.Completion
	r.RNBWait += ct.PathReady - ct.Ready
	busy, rcf := ct.End-ct.TransmitStart, ct.TransmitStart-ct.PathReady
	// Circuits on padding ports carry nothing real; only real ports are reported.
	n := len(r.Endpoints) / 2
	if c.Src < s.Ports {
		e := &r.Endpoints[r.entry(c.Src)]
		e.Busy += busy
		e.Reconfiguring += rcf
	}
	if c.Dst < s.Ports {
		e := &r.Endpoints[n+r.entry(c.Dst)]
		e.Busy += busy
		e.Reconfiguring += rcf
	}
}

// finish adds idle times, lower bounds and notes once every circuit is counted.
func (r summary) finish(s *schedules.Schedule, d *schedules.Demand, cfg Config) *Result {
	return r.finishSplit(s, d, cfg, func() (int, int) {
		pieces := map[[2]int]int{}
		for i := range s.Circuits {
			pieces[[2]int{s.Circuits[i].Src, s.Circuits[i].Dst}]++
		}
		split, extra := 0, 0
		for _, k := range pieces {
			if k > 1 {
				split++
				extra += k - 1
			}
		}
		return split, extra
	})
}

// finishSplit is finish with the count of demands split across several circuits, and of the
// pieces beyond one each, from split (asked only under the α-β model).
func (r summary) finishSplit(s *schedules.Schedule, d *schedules.Demand, cfg Config, splits func() (split, extra int)) *Result {
	for i := range r.Endpoints {
		ep := &r.Endpoints[i]
		ep.Idle = max(r.Completion-ep.Busy-ep.Reconfiguring, 0)
	}
	if d != nil {
		r.boundsFor(d, cfg)
	}
	if _, ok := cfg.Transfer.(*alphaBetaModel); ok {
		if split, extra := splits(); split > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("α-β model: %d demands are split across several circuits and pay α once per piece (%d extra α in all)", split, extra))
		}
	}
	if s.Fabric == schedules.Crossbar && r.StateChanges > 0 {
		r.Notes = append(r.Notes, "crossbar: state changes count transmitter re-pointings; the timeline lists no switch changes")
	}
	return r.Result
}

// boundsFor sets the lower bounds for d and the ratios to them, from the run's own models: the
// transfer model's MinSeconds for each pair (schedules.LowerBoundUnder; schedules.LowerBound's
// load/b under the bandwidth model, the same bound) and the reconfiguration model's one-command
// delay as α_r. A pair the transfer model cannot time leaves the run without bounds, with a note.
func (r summary) boundsFor(d *schedules.Demand, cfg Config) {
	r.BoundReconfig = cfg.Reconfig.Nominal()
	if b, ok := BandwidthOf(cfg.Transfer); ok && b > 0 {
		r.BoundBandwidth = b
		r.Bounds = schedules.LowerBound(d, b, r.BoundReconfig)
	} else {
		bd, err := schedules.LowerBoundUnder(d, cfg.Transfer.MinSeconds, r.BoundReconfig)
		if err != nil {
			r.BoundReconfig = 0
			r.Notes = append(r.Notes, fmt.Sprintf("no lower bounds under the %s transfer model: %v", cfg.Transfer.Name(), err))
			return
		}
		r.Bounds = bd
	}
	if r.Bounds.Bandwidth > 0 {
		r.RatioBandwidth = ratio(r.Completion, r.Bounds.Bandwidth)
	}
	if r.Bounds.Reconfig > 0 {
		r.RatioReconfig = ratio(r.Completion, r.Bounds.Reconfig)
	}
}

// BoundRatio is completion over a lower bound, 1 where a run (or a sum of runs) that meets its
// bound falls below it by rounding only (within a relative 1e-9: the walk adds start times and
// durations in another order than the bound sums them), so that a tight bound never reads
// 0.999…; a ratio really below 1 (a live run faster than its model) stays as it is.
func BoundRatio(completion, bound float64) float64 { return ratio(completion, bound) }

func ratio(completion, bound float64) float64 {
	q := completion / bound
	if q < 1 && q >= 1-boundSlack {
		return 1
	}
	return q
}

// boundSlack is the relative rounding a completion may fall below its lower bound by: the walk
// adds start times and durations in another order than the bound sums the durations.
const boundSlack = 1e-9

// checkBound fails an emulated run that finished before its own lower bound. That cannot happen
// for a schedule that delivers d (schedules.LowerBoundUnder's proof), so it is either such a
// schedule (Run does not check delivery: schedules.Verify does) or a bug, and either way no
// ratio below 1 may reach a table.
func checkBound(res *Result, s *schedules.Schedule, d *schedules.Demand) error {
	return checkBoundSent(res, s, d, func() map[[2]int]int64 {
		got := map[[2]int]int64{}
		for i := range s.Circuits {
			c := &s.Circuits[i]
			got[[2]int{c.Src, c.Dst}] += c.Bytes
		}
		return got
	})
}

// checkBoundSent is checkBound with the bytes the schedule sends per pair from sent (asked only
// when the completion is below the bound).
func checkBoundSent(res *Result, s *schedules.Schedule, d *schedules.Demand, sent func() map[[2]int]int64) error {
	lb := res.Bounds.Max()
	if d == nil || !(res.Completion < lb*(1-boundSlack)) {
		return nil
	}
	got := sent()
	for i := range d.N() {
		for j := range d.N() {
			if want := d.At(i, j); got[[2]int{i, j}] != want {
				return fmt.Errorf("emulator: schedule %q does not deliver its demand (pair (%d, %d): %d of %d bytes), and its completion %s is below the demand's lower bound %s: verify the schedule against the demand",
					s.Algorithm, i, j, got[[2]int{i, j}], want, units.FormatSeconds(res.Completion), units.FormatSeconds(lb))
			}
		}
	}
	return fmt.Errorf("emulator: internal error: %s completes in %s, below its lower bound %s (bandwidth bound %s, reconfiguration-aware %s) under transfer model %s and reconfiguration %s; a lower bound that a valid run beats is a bug",
		s.Algorithm, units.FormatSeconds(res.Completion), units.FormatSeconds(lb), units.FormatSeconds(res.Bounds.Bandwidth),
		units.FormatSeconds(res.Bounds.Reconfig), res.Transfer, res.Reconfig)
}
