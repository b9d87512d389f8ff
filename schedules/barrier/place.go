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

// plan is a barrier schedule before it is laid on a fabric.
type plan struct {
	rounds [][]piece
	// planned[r] is round r's stuffed duration in bytes (decompositions), or nil when a round
	// lasts until its longest circuit ends (MaxWeight).
	planned []int64
	options map[string]string
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
	rem := clone(real)
	p := plan{
		rounds:  make([][]piece, len(slices)),
		planned: make([]int64, len(slices)),
		options: options,
	}
	idle := 0
	// Rounds are built in one buffer and kept at their exact size (see fromScaledSlices).
	buf := make([]piece, 0, len(real))
	for r, s := range slices {
		p.planned[r] = s.Duration
		round := buf[:0]
		for i, j := range s.Perm {
			if b := min(s.Duration, rem[i][j]); b > 0 {
				round = append(round, piece{i, j, b})
				rem[i][j] -= b
			}
		}
		if len(round) > 0 {
			p.rounds[r] = gslices.Clone(round)
		}
		buf = round
		if len(p.rounds[r]) == 0 {
			idle++
		}
	}
	options["rounds"] = strconv.Itoa(len(slices))
	options["idle_rounds"] = strconv.Itoa(idle)
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
	ports := d.N()
	kind := o.Fabric
	if kind == "" {
		kind = schedules.Benes
	}
	s := &schedules.Schedule{
		Version:   schedules.FormatVersion,
		Algorithm: algo,
		N:         ports,
		Ports:     ports,
		Fabric:    kind,
		Mode:      schedules.Barrier,
		Params: schedules.Params{
			BandwidthBytesPerSecond: o.Bandwidth,
			ReconfigSeconds:         o.Reconfig,
			Options:                 p.options,
		},
	}
	total := 0
	for _, round := range p.rounds {
		total += len(round)
	}
	// BvN at n = 128 makes about half a million circuits: size everything once, never grow it.
	s.Circuits = make([]schedules.Circuit, 0, total)
	times := make([]float64, 0, 2*total)
	var fab *benes.Fabric
	var state []benes.State
	if kind == schedules.Benes {
		s.N = benes.SizeFor(ports)
		f, err := benes.New(s.N)
		if err != nil {
			return nil, fmt.Errorf("barrier: %d ports: %w", ports, err)
		}
		fab = f
		state = make([]benes.State, f.NumSwitches()) // all Bar at t = 0
	}
	pointsTo := make([]int, ports)
	for i := range pointsTo {
		pointsTo[i] = -1
	}
	t := 0.0
	// Per-round lists, reused (a round has at most one circuit per port).
	paths := make([]benes.Path, 0, ports)
	conns := make([]benes.Conn, 0, ports)
	for r, round := range p.rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(round) > cap(paths) {
			paths = make([]benes.Path, 0, len(round))
		}
		paths = paths[:len(round)]
		reconfig := false
		if fab != nil {
			conns = conns[:0]
			for _, pc := range round {
				conns = append(conns, benes.Conn{Src: pc.src, Dst: pc.dst})
			}
			choices, err := fab.Route(conns, nil)
			if err != nil {
				return nil, fmt.Errorf("barrier: %s round %d: %w", algo, r, err)
			}
			for k, pc := range round {
				paths[k] = fab.NewPath(pc.src, pc.dst, choices[k])
				for _, tr := range paths[k].All() {
					id := fab.SwitchID(tr.Stage, tr.Switch)
					if state[id] != tr.State() {
						reconfig = true
						state[id] = tr.State()
					}
				}
			}
		} else {
			for k, pc := range round {
				paths[k] = benes.EmptyPath() // no internal path; written [] rather than null
				if pointsTo[pc.src] != pc.dst {
					reconfig = true
					pointsTo[pc.src] = pc.dst
				}
			}
		}
		start := t
		if reconfig {
			start += o.Reconfig
		}
		length := 0.0
		if p.planned != nil {
			length = float64(p.planned[r]) / o.Bandwidth
			s.Rounds = append(s.Rounds, schedules.Round{Group: r, PlannedDuration: length})
		}
		for k, pc := range round {
			// Each circuit points at its own pair of times (a shared pointer would let an edit to
			// one circuit move the others); they live in one backing slice.
			times = append(times, start, start+float64(pc.bytes)/o.Bandwidth)
			begin, end := &times[len(times)-2], &times[len(times)-1]
			length = max(length, *end-*begin)
			s.Circuits = append(s.Circuits, schedules.Circuit{
				Src: pc.src, Dst: pc.dst, Bytes: pc.bytes, Group: r, Path: paths[k],
				PlannedStart: begin, PlannedEnd: end,
			})
		}
		if o.Plans == nil {
			p.rounds[r] = nil // placed, and kept by no cache: its pieces can go
		}
		t = start + length
	}
	return s, nil
}
