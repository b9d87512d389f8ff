package emulator

import (
	"context"
	"fmt"
	"math"
	"math/bits"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// RoundRun executes a barrier schedule handed out round by round (schedules.RoundStream) and
// keeps none of it: per round it finds the switches that change (every switch starts in Bar),
// sends them as one command when the previous round has ended and lasted its planned duration,
// and times each circuit from the command's end. The Result, the per-switch counts and every
// error are those of RunResult and SwitchChanges on the same schedule whole (the same
// arithmetic in the same order: TestRoundRunMatchesRun); its memory is the fabric's switches
// and the demand's pairs, whatever the number of circuits.
type RoundRun struct {
	header schedules.Schedule
	d      *schedules.Demand
	cfg    Config
	fab    *benes.Fabric
	wr     wiring
	rc     Reconfigurer
	sum    summary
	// Per switch (Fabric.SwitchID): its state, the round (from 1) that last asked for it and
	// the state asked for; on a crossbar, per transmitter the receiver it points at (−1: none).
	state, set, want []int32
	dst              []int32
	// counts are the changes per switch, row stage+1 (a crossbar's −1 is row 0) of n entries.
	counts, pieces []int
	sent           []int64
	n              int
	t              float64 // when the next round is requested
	rounds, base   int
	last           int // the previous round's group (−1 before the first)
	changes        int
	reconfig       int
	events         int
	mini           schedules.Schedule
	// part is the last round's part of the run's timeline (Part); hasPart says there is one.
	part    schedules.RoundPart
	hasPart bool
}

// NewRoundRun starts the execution of a stream whose header is h under cfg; d is the demand it
// was planned for (it gives the lower bounds and lists the endpoints; it may not be nil).
func NewRoundRun(h *schedules.Schedule, d *schedules.Demand, cfg Config) (*RoundRun, error) {
	if cfg.Transfer == nil || cfg.Reconfig == nil {
		return nil, fmt.Errorf("emulator: config needs both a transfer and a reconfiguration model")
	}
	if a := cfg.Reconfig.Nominal(); !(a >= 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("emulator: reconfiguration model %s: delay %g s is not a non-negative time", cfg.Reconfig.Name(), a)
	}
	rr := &RoundRun{header: *h, d: d, cfg: cfg, last: -1}
	rr.header.Circuits, rr.header.Rounds = nil, nil
	s := &rr.header
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("emulator: schedule %q: %w", s.Algorithm, err)
	}
	if s.Mode != schedules.Barrier {
		return nil, fmt.Errorf("emulator: schedule %q: a schedule run round by round runs in barrier mode, not %q", s.Algorithm, s.Mode)
	}
	if d == nil || d.N() != s.Ports {
		return nil, fmt.Errorf("emulator: schedule %q, %d real ports: a run round by round needs the demand of as many ports", s.Algorithm, s.Ports)
	}
	f, err := s.BenesFabric()
	if err != nil {
		return nil, fmt.Errorf("emulator: schedule %q: %w", s.Algorithm, err)
	}
	rr.fab, rr.rc = f, cfg.Reconfig.NewReconfigurer()
	rr.n = max(s.N, 2)
	stages := 2*bits.Len(uint(rr.n-1)) - 1
	rr.counts = make([]int, (stages+1)*rr.n)
	if f != nil {
		rr.wr = newWiring(f)
		ns := f.NumSwitches()
		rr.state, rr.set, rr.want = make([]int32, ns), make([]int32, ns), make([]int32, ns)
	}
	rr.dst = make([]int32, s.N)
	for i := range rr.dst {
		rr.dst[i] = -1
	}
	rr.sent = make([]int64, s.Ports*s.Ports)
	if _, ok := cfg.Transfer.(*alphaBetaModel); ok {
		rr.pieces = make([]int, s.Ports*s.Ports)
	}
	rr.sum = newSummary(s, d, cfg, Counts{})
	return rr, nil
}

// Round executes the next round of the stream: after every round before it, as Run would.
func (rr *RoundRun) Round(ctx context.Context, r schedules.StreamRound) error {
	rr.hasPart = false
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(r.Circuits) == 0 && r.Round == nil {
		return nil // no round at all: Run would not see one
	}
	s := &rr.header
	if r.Group <= rr.last {
		return fmt.Errorf("emulator: schedule %q: round %d comes after round %d: a stream's rounds ascend", s.Algorithm, r.Group, rr.last)
	}
	rr.last = r.Group
	planned := 0.0
	if r.Round != nil {
		if !(r.Round.PlannedDuration >= 0) {
			return fmt.Errorf("emulator: round %d: planned duration %g is negative", r.Group, r.Round.PlannedDuration)
		}
		planned = r.Round.PlannedDuration
	}
	rr.part.SwitchChanges, rr.part.Ends = rr.part.SwitchChanges[:0], rr.part.Ends[:0]
	k, err := rr.roundChanges(r)
	if err != nil {
		return err
	}
	req := rr.t
	start, end := req, req // a round without changes starts at once
	rcStart := req
	if k > 0 {
		start, end = rr.rc.Command(req, k)
		if !(start >= req && end >= start) || math.IsInf(end, 1) {
			return fmt.Errorf("emulator: reconfiguration model %s: a command of %d changes requested at %g s starts at %g s and ends at %g s; it must start at or after its request and end, in finite time, at or after its start", rr.cfg.Reconfig.Name(), k, req, start, end)
		}
		rcStart = start
		rr.reconfig++
	}
	rr.events += k
	rr.part.Timing = schedules.RoundTiming{Ready: req, ReconfigStart: rcStart, ChangeStart: start, ChangeEnd: end}
	roundEnd := end + planned
	for j := range r.Circuits {
		c := &r.Circuits[j]
		i := rr.base + j
		t, err := rr.cfg.Transfer.Seconds(c.Src, c.Dst, c.Bytes)
		if err != nil {
			return fmt.Errorf("emulator: circuit %d (%d→%d, %d bytes): %w", i, c.Src, c.Dst, c.Bytes, err)
		}
		if !(t >= 0) || math.IsInf(t, 0) {
			return fmt.Errorf("emulator: circuit %d (%d→%d, %d bytes): transfer model %s gave %g s", i, c.Src, c.Dst, c.Bytes, rr.cfg.Transfer.Name(), t)
		}
		ct := schedules.CircuitTiming{Circuit: i, Ready: req, PathReady: req, ReconfigStart: rcStart, TransmitStart: end, End: end + t}
		rr.sum.addCircuit(s, c, &ct)
		rr.part.Ends = append(rr.part.Ends, ct.End)
		roundEnd = max(roundEnd, ct.End)
		rr.events++
		if c.Src < s.Ports && c.Dst < s.Ports {
			rr.sent[c.Src*s.Ports+c.Dst] += c.Bytes
			if rr.pieces != nil {
				rr.pieces[c.Src*s.Ports+c.Dst]++
			}
		}
	}
	rr.base += len(r.Circuits)
	rr.rounds++
	rr.t = roundEnd
	rr.hasPart = true
	return nil
}

// Part is the last round's part of the run's timeline (what the RoundTimeline of the whole run
// holds for it: its times, its circuits' ends and its switch changes), for
// schedules.RoundTimelineVerifier; ok is false when the last call to Round failed or executed
// no round. It is valid until the next call to Round, which reuses its slices.
func (rr *RoundRun) Part() (p *schedules.RoundPart, ok bool) {
	return &rr.part, rr.hasPart
}

// roundChanges checks round r's circuits against the fabric and returns how many switches (on
// a crossbar, transmitters) change state for it, counting them per switch.
func (rr *RoundRun) roundChanges(r schedules.StreamRound) (int, error) {
	var hb [benes.MaxStages]benes.Traversal // room for a path (hops)
	s := &rr.header
	rr.mini.N, rr.mini.Circuits = s.N, r.Circuits
	stamp := int32(rr.rounds + 1)
	half, k := s.N/2, 0
	for j := range r.Circuits {
		c := &r.Circuits[j]
		if err := checkCircuit(&rr.mini, rr.fab, rr.wr, j, rr.cfg.PathsChecked, hb[:0]); err != nil {
			return 0, fmt.Errorf("round %d (circuits from %d): %w", r.Group, rr.base, err)
		}
		if rr.fab == nil {
			if rr.dst[c.Src] != int32(c.Dst) {
				rr.dst[c.Src] = int32(c.Dst)
				rr.counts[c.Src]++
				k++
			}
			continue
		}
		for _, t := range hops(c, hb[:0]) {
			sw := t.Stage*half + t.Switch // Fabric.SwitchID
			st := int32(t.State())
			if rr.set[sw] == stamp {
				if rr.want[sw] != st {
					return 0, fmt.Errorf("emulator: round %d: switch (stage %d, %d) needed both bar and cross (circuit %d)", r.Group, t.Stage, t.Switch, rr.base+j)
				}
				continue
			}
			rr.set[sw], rr.want[sw] = stamp, st
			if st != rr.state[sw] {
				rr.state[sw] = st
				rr.counts[(t.Stage+1)*rr.n+t.Switch]++
				rr.part.SwitchChanges = append(rr.part.SwitchChanges, schedules.RoundSwitchChange{Stage: int32(t.Stage), Switch: int32(t.Switch), To: benes.State(st)})
				k++
			}
		}
	}
	rr.changes += k
	return k, nil
}

// Finish returns the run's Result and its changes per switch (as SwitchChanges lists them) once
// every round has been executed.
func (rr *RoundRun) Finish() (*Result, []SwitchCount, error) {
	s, r := &rr.header, rr.sum
	r.Groups, r.Circuits = rr.rounds, rr.base
	r.StateChanges, r.ReconfigEvents, r.Events = rr.changes, rr.reconfig, rr.events
	ports := s.Ports
	res := r.finishSplit(s, rr.d, rr.cfg, func() (int, int) {
		split, extra := 0, 0
		for _, k := range rr.pieces {
			if k > 1 {
				split++
				extra += k - 1
			}
		}
		return split, extra
	})
	err := checkBoundSent(res, s, rr.d, func() map[[2]int]int64 {
		got := map[[2]int]int64{}
		for p, b := range rr.sent {
			if b != 0 {
				got[[2]int{p / ports, p % ports}] = b
			}
		}
		return got
	})
	if err != nil {
		return nil, nil, err
	}
	out := []SwitchCount{}
	for id, c := range rr.counts {
		if c > 0 {
			out = append(out, SwitchCount{Stage: id/rr.n - 1, Index: id % rr.n, Count: c})
		}
	}
	return res, out, nil
}
