package emulator

import (
	"fmt"
	"math/bits"
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
	sc := newCircuitScan(s, d)
	for i := range s.Circuits {
		sc.add(&s.Circuits[i], s.Ports)
	}
	return newSummaryOf(s, d, cfg, c, &sc)
}

// newSummaryOf is newSummary with what it needs of the circuits already gathered in sc (the
// emulator gathers it in its own pass over them, which reads each circuit once for all).
func newSummaryOf(s *schedules.Schedule, d *schedules.Demand, cfg Config, c Counts, sc *circuitScan) summary {
	r := &Result{
		Algorithm:      s.Algorithm,
		Transfer:       cfg.Transfer.Name(),
		Reconfig:       cfg.Reconfig.Name(),
		Groups:         sc.groups, // Schedule.Groups
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
		ps = sc.ports(s)
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

// circuitScan is what a summary needs of the circuits, gathered one circuit at a time: the
// number of groups (Schedule.Groups) and, without a demand, the real ports they use.
//
// The ports are marked in a bitset where a bit per port takes no more room than a list of the
// circuits' ports would (memory by circuits, not ports), and read back in order: sorting the
// list cost a tenth of an emulation's time at 128 ports. Where the bitset would be larger, or a
// port is negative (no schedule Run accepts), the ports are listed by sorting as they always
// were (sortedPorts).
type circuitScan struct {
	groups int
	set    []uint64 // nil: no ports marked
	sorted bool     // list the ports by sorting
}

// newCircuitScan prepares a scan of s's circuits for a summary against d (nil: none).
func newCircuitScan(s *schedules.Schedule, d *schedules.Demand) circuitScan {
	if d != nil {
		return circuitScan{} // the demand lists the ports
	}
	words := (s.Ports + 63) / 64
	if words > 2*len(s.Circuits) {
		return circuitScan{sorted: true}
	}
	return circuitScan{set: make([]uint64, words)}
}

// add counts circuit c of a schedule with ports real ports.
func (sc *circuitScan) add(c *schedules.Circuit, ports int) {
	sc.groups = max(sc.groups, c.Group+1)
	if sc.set == nil {
		return
	}
	if c.Src < 0 || c.Dst < 0 {
		sc.set, sc.sorted = nil, true
		return
	}
	if c.Src < ports { // a padding port (≥ Ports) is not real
		sc.set[c.Src>>6] |= 1 << (c.Src & 63)
	}
	if c.Dst < ports {
		sc.set[c.Dst>>6] |= 1 << (c.Dst & 63)
	}
}

// ports lists the real ports that s's circuits use, sorted and without repeats, or nil when
// every real port is used (the identity). Call it once every circuit is added.
func (sc *circuitScan) ports(s *schedules.Schedule) []int {
	if sc.sorted {
		return sortedPorts(s)
	}
	used := 0
	for _, x := range sc.set {
		used += bits.OnesCount64(x)
	}
	if used == s.Ports {
		return nil
	}
	ps := make([]int, 0, used)
	for w, x := range sc.set {
		for ; x != 0; x &= x - 1 {
			ps = append(ps, w<<6|bits.TrailingZeros64(x))
		}
	}
	return ps
}

// usedPorts is the list of ports that newSummary makes without a demand (see circuitScan).
func usedPorts(s *schedules.Schedule) []int {
	sc := newCircuitScan(s, nil)
	for i := range s.Circuits {
		sc.add(&s.Circuits[i], s.Ports)
	}
	return sc.ports(s)
}

// sortedPorts is usedPorts by sorting the list of the circuits' real ports.
func sortedPorts(s *schedules.Schedule) []int {
	ps := make([]int, 0, 2*len(s.Circuits))
	for i := range s.Circuits {
		for _, p := range [2]int{s.Circuits[i].Src, s.Circuits[i].Dst} {
			if p < s.Ports {
				ps = append(ps, p)
			}
		}
	}
	slices.Sort(ps)
	if ps = slices.Compact(ps); len(ps) == s.Ports {
		return nil // every port is used: the identity
	}
	return ps
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
	}
	bd, err := LowerBounds(d, cfg)
	if err != nil {
		r.BoundReconfig = 0
		r.Notes = append(r.Notes, fmt.Sprintf("no lower bounds under the %s transfer model: %v", cfg.Transfer.Name(), err))
		return
	}
	r.Bounds = bd
	if r.Bounds.Bandwidth > 0 {
		r.RatioBandwidth = ratio(r.Completion, r.Bounds.Bandwidth)
	}
	if r.Bounds.Reconfig > 0 {
		r.RatioReconfig = ratio(r.Completion, r.Bounds.Reconfig)
	}
}

// LowerBounds are the lower bounds of any execution of demand d under cfg's models, as Run
// reports them: under the bandwidth model schedules.LowerBound at its b, else
// schedules.LowerBoundUnder the transfer model's MinSeconds; α_r is the reconfiguration model's
// one-command delay. A pair the transfer model cannot time is an error.
func LowerBounds(d *schedules.Demand, cfg Config) (schedules.Bounds, error) {
	if b, ok := BandwidthOf(cfg.Transfer); ok && b > 0 {
		return schedules.LowerBound(d, b, cfg.Reconfig.Nominal()), nil
	}
	return schedules.LowerBoundUnder(d, cfg.Transfer.MinSeconds, cfg.Reconfig.Nominal())
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
