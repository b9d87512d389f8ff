package barrier

import (
	"context"
	"fmt"
	"maps"
	gslices "slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// piece is one circuit of a round: src sends bytes real bytes to dst.
type piece struct {
	src, dst int
	bytes    int64
}

// plan is a barrier schedule before it is laid on a fabric: its rounds whole, or, when next is
// set, made one at a time by next (each in a buffer that the next call reuses; ok false ends).
type plan struct {
	rounds [][]piece
	// planned[r] is round r's stuffed duration in bytes (decompositions), or nil when a round
	// lasts until its longest circuit ends (MaxWeight).
	planned []int64
	options map[string]string
	next    func() (round []piece, ok bool)
}

// planOf returns algo's plan of real: from o.Plans when it holds it, else from build (then kept
// there). Plans are pure functions of the matrix, so a kept one is what build would return; the
// options map is copied, since every schedule gets its own.
func planOf(o schedules.Options, algo string, real [][]int64, build func() (plan, error)) (plan, error) {
	var key schedules.PlanKey
	if o.Plans != nil {
		key = schedules.NewPlanKey(algo, real)
		if v, ok := o.Plans.Load(key); ok {
			p := v.(plan)
			p.options = maps.Clone(p.options)
			return p, nil
		}
	}
	p, err := build()
	if err != nil || o.Plans == nil {
		return p, err
	}
	kept := p
	kept.options = maps.Clone(p.options)
	o.Plans.Store(key, kept)
	return p, nil
}

// fromSlices turns a decomposition of the stuffed matrix into rounds, real bytes first: the
// circuit for (i, j) in a slice carries min(slice duration, real bytes of (i, j) still unsent), so
// a pair's stuffing is idle time at the end of its last slices. A pair with no real bytes left gets
// no circuit, and a slice may end up with no circuit at all: it still lasts its duration, because
// that is what executing the decomposition costs.
func fromSlices(real [][]int64, slices []Slice, options map[string]string) plan {
	p := slicePlan(real, slices, options)
	next := p.next
	p.next = nil
	p.rounds = make([][]piece, 0, len(slices))
	for {
		round, ok := next()
		if !ok {
			break
		}
		// Rounds are built in one buffer and kept at their exact size (see fromScaledSlices).
		var kept []piece
		if len(round) > 0 {
			kept = gslices.Clone(round)
		}
		p.rounds = append(p.rounds, kept)
	}
	return p
}

// slicePlan is fromSlices made one round at a time (plan.next): each call returns the next
// slice's pieces, in a buffer the next call reuses. The options get "rounds" at once and
// "idle_rounds" once the last round is made.
func slicePlan(real [][]int64, slices []Slice, options map[string]string) plan {
	rem := clone(real)
	p := plan{planned: make([]int64, len(slices)), options: options}
	for r, s := range slices {
		p.planned[r] = s.Duration
	}
	options["rounds"] = strconv.Itoa(len(slices))
	idle, r := 0, 0
	buf := make([]piece, 0, len(real))
	p.next = func() ([]piece, bool) {
		if r == len(slices) {
			options["idle_rounds"] = strconv.Itoa(idle)
			return nil, false
		}
		s := slices[r]
		slices[r].Perm = nil // made into pieces: the permutation can go
		r++
		round := buf[:0]
		for i, j := range s.Perm {
			if b := min(s.Duration, rem[i][j]); b > 0 {
				round = append(round, piece{i, j, b})
				rem[i][j] -= b
			}
		}
		buf = round
		if len(round) == 0 {
			idle++
		}
		return round, true
	}
	return p
}

// realMatrix is the demand as the fabric sees it (diagonal zero unless the demand counts it). A
// Demand built by hand rather than by DemandFromRows may be ragged or negative: that is an error
// here, not an index panic later.
func realMatrix(d *schedules.Demand) ([][]int64, error) {
	n := d.N()
	m := make([][]int64, n)
	for i := range n {
		if len(d.Bytes[i]) != n {
			return nil, fmt.Errorf("demand row %d has %d entries, want %d", i, len(d.Bytes[i]), n)
		}
		m[i] = make([]int64, n)
		for j := range n {
			if m[i][j] = d.At(i, j); m[i][j] < 0 {
				return nil, fmt.Errorf("demand entry [%d][%d] = %d is negative", i, j, m[i][j])
			}
		}
	}
	return m, nil
}

// place lays a plan on the fabric o asks for (Beneš by default) and fills in planned times under
// barrier semantics (DESIGN.md, "Execution semantics"): round r starts when round r−1 ends; if any
// switch its circuits traverse must change state (on a crossbar: if any of its transmitters must
// re-point; at t = 0 none points anywhere), all its circuits first wait α_r; each circuit then
// transmits for bytes/b; the round ends when its transmission phase has lasted both its planned
// duration and its longest circuit. On Beneš each round's partial permutation is routed with the
// looping algorithm.
func place(ctx context.Context, algo string, d *schedules.Demand, o schedules.Options, p plan) (*schedules.Schedule, error) {
	pl, err := newPlacer(algo, d, o, p.options)
	if err != nil {
		return nil, err
	}
	s := &pl.header
	total := 0
	for _, round := range p.rounds {
		total += len(round)
	}
	// BvN at n = 128 makes about half a million circuits: size everything once, never grow it.
	s.Circuits = make([]schedules.Circuit, 0, total)
	times := make([]float64, 0, 2*total)
	for r, round := range p.rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var rd *schedules.Round
		s.Circuits, times, rd, err = pl.round(r, round, p.plannedOf(r), s.Circuits, times)
		if err != nil {
			return nil, err
		}
		if rd != nil {
			s.Rounds = append(s.Rounds, *rd)
		}
		if o.Plans == nil {
			p.rounds[r] = nil // placed, and kept by no cache: its pieces can go
		}
	}
	return s, nil
}

// placeRounds is place round by round: each round is laid on the fabric as the stream is asked
// for it, from the plan's rounds or, for a plan made one round at a time (plan.next), as it is
// made, and nothing of it is kept after the next.
func placeRounds(algo string, d *schedules.Demand, o schedules.Options, p plan) (*schedules.RoundStream, error) {
	pl, err := newPlacer(algo, d, o, p.options)
	if err != nil {
		return nil, err
	}
	var cs []schedules.Circuit
	var times []float64
	r := 0
	next := func(ctx context.Context) (schedules.StreamRound, bool, error) {
		var round []piece
		switch {
		case p.next != nil:
			pcs, ok := p.next()
			if !ok {
				return schedules.StreamRound{}, false, nil
			}
			round = pcs
		case r < len(p.rounds):
			round = p.rounds[r]
			if o.Plans == nil {
				p.rounds[r] = nil
			}
		default:
			return schedules.StreamRound{}, false, nil
		}
		if cap(times) < 2*len(round) {
			times = make([]float64, 0, 2*len(round))
		}
		var rd *schedules.Round
		var err error
		cs, times, rd, err = pl.round(r, round, p.plannedOf(r), cs[:0], times[:0])
		if err != nil {
			return schedules.StreamRound{}, false, err
		}
		out := schedules.StreamRound{Group: r, Round: rd, Circuits: cs}
		r++
		return out, true, nil
	}
	return schedules.NewRoundStream(pl.header, next), nil
}

// plannedOf is round r's stuffed duration in bytes, or −1 when its rounds last until their
// longest circuit ends.
func (p *plan) plannedOf(r int) int64 {
	if p.planned == nil {
		return -1
	}
	return p.planned[r]
}

// placer lays a plan's rounds on the fabric one after another: the switch states (transmitter
// pointings on a crossbar) and the time carry from round to round.
type placer struct {
	algo     string
	o        schedules.Options
	header   schedules.Schedule
	fab      *benes.Fabric
	state    []benes.State
	pointsTo []int
	t        float64
	// Per-round lists, reused (a round has at most one circuit per port).
	paths []benes.Path
	conns []benes.Conn
}

// newPlacer starts a placement of algo's plan of d under o; the header is the schedule without
// circuits or rounds.
func newPlacer(algo string, d *schedules.Demand, o schedules.Options, options map[string]string) (*placer, error) {
	ports := d.N()
	kind := o.Fabric
	if kind == "" {
		kind = schedules.Benes
	}
	pl := &placer{algo: algo, o: o, header: schedules.Schedule{
		Version:   schedules.FormatVersion,
		Algorithm: algo,
		N:         ports,
		Ports:     ports,
		Fabric:    kind,
		Mode:      schedules.Barrier,
		Params: schedules.Params{
			BandwidthBytesPerSecond: o.Bandwidth,
			ReconfigSeconds:         o.Reconfig,
			Options:                 options,
		},
	}}
	if kind == schedules.Benes {
		pl.header.N = benes.SizeFor(ports)
		f, err := benes.New(pl.header.N)
		if err != nil {
			return nil, fmt.Errorf("barrier: %d ports: %w", ports, err)
		}
		pl.fab = f
		pl.state = make([]benes.State, f.NumSwitches()) // all Bar at t = 0
	}
	pl.pointsTo = make([]int, ports)
	for i := range pl.pointsTo {
		pl.pointsTo[i] = -1
	}
	pl.paths = make([]benes.Path, 0, ports)
	pl.conns = make([]benes.Conn, 0, ports)
	return pl, nil
}

// round lays round r (its pieces, and its stuffed duration in bytes, −1 for none) on the fabric:
// it appends the round's circuits to cs and their planned times to times, which must have room
// for them (the circuits point into it), and returns the round's Rounds entry, nil for none.
func (pl *placer) round(r int, round []piece, planned int64, cs []schedules.Circuit, times []float64) ([]schedules.Circuit, []float64, *schedules.Round, error) {
	if cap(times)-len(times) < 2*len(round) {
		return nil, nil, nil, fmt.Errorf("barrier: internal error: no room for the planned times of round %d", r)
	}
	if len(round) > cap(pl.paths) {
		pl.paths = make([]benes.Path, 0, len(round))
	}
	paths := pl.paths[:len(round)]
	reconfig, err := pl.route(r, round, paths)
	if err != nil {
		return nil, nil, nil, err
	}
	start := pl.t
	if reconfig {
		start += pl.o.Reconfig
	}
	length := 0.0
	var rd *schedules.Round
	if planned >= 0 {
		length = float64(planned) / pl.o.Bandwidth
		rd = &schedules.Round{Group: r, PlannedDuration: length}
	}
	for k, pc := range round {
		// Each circuit points at its own pair of times (a shared pointer would let an edit to
		// one circuit move the others); they live in one backing slice.
		times = append(times, start, start+float64(pc.bytes)/pl.o.Bandwidth)
		begin, end := &times[len(times)-2], &times[len(times)-1]
		length = max(length, *end-*begin)
		cs = append(cs, schedules.Circuit{
			Src: pc.src, Dst: pc.dst, Bytes: pc.bytes, Group: r, Path: paths[k],
			PlannedStart: begin, PlannedEnd: end,
		})
	}
	pl.t = start + length
	return cs, times, rd, nil
}

// route gives round r's circuits their paths (none on a crossbar) and says whether any switch
// (or transmitter) must change for it.
func (pl *placer) route(r int, round []piece, paths []benes.Path) (bool, error) {
	reconfig := false
	if pl.fab == nil {
		for k, pc := range round {
			paths[k] = benes.EmptyPath() // no internal path; written [] rather than null
			if pl.pointsTo[pc.src] != pc.dst {
				reconfig = true
				pl.pointsTo[pc.src] = pc.dst
			}
		}
		return reconfig, nil
	}
	fab := pl.fab
	conns := pl.conns[:0]
	for _, pc := range round {
		conns = append(conns, benes.Conn{Src: pc.src, Dst: pc.dst})
	}
	pl.conns = conns
	choices, err := fab.Route(conns, nil)
	if err != nil {
		return false, fmt.Errorf("barrier: %s round %d: %w", pl.algo, r, err)
	}
	for k, pc := range round {
		paths[k] = fab.NewPath(pc.src, pc.dst, choices[k])
		for _, tr := range paths[k].All() {
			id := fab.SwitchID(tr.Stage, tr.Switch)
			if pl.state[id] != tr.State() {
				reconfig = true
				pl.state[id] = tr.State()
			}
		}
	}
	return reconfig, nil
}
