package shared

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Work is one worker's share of a program.
type Work struct {
	// Worker numbers the worker (its status word); Endpoints are the endpoints whose steps it
	// runs, each endpoint in exactly one worker.
	Worker    int
	Endpoints []int
	// Durations are the copy times of the circuits, ns, indexed by circuit (those of other
	// workers' endpoints are not read).
	Durations []int64
	// Sleep is how far ahead of the next deadline the worker stops sleeping and spins, when
	// none of its endpoints waits on a flag (zero: always spin).
	Sleep time.Duration
	// ArmTimeout bounds the wait for the host's release (zero: one minute).
	ArmTimeout time.Duration
	// ClockSamples is how many round trips measure the device clock's offset before arming
	// (zero: 16). Clock reads the device clock in ns; nil is the fake device's, CLOCK_MONOTONIC
	// itself, whose offset is measured (to show what the measurement resolves) but not applied.
	// A GPU executor applies its offset to every stamp it writes.
	// SpinOnly never sleeps on the generation word while waiting for a flag: right where every
	// process has a core of its own (a sleeper's wake-up then costs more than the spin).
	SpinOnly     bool `json:"spin_only,omitempty"`
	ClockSamples int  `json:"clock_samples,omitempty"`
	// ClockMaxAge is how old a GPU executor's last measurement of the offset may be and still
	// be reused by this job instead of probing again (zero: the executor's default; a GPU
	// worker keeps its GPU open from one job of a replay to the next).
	ClockMaxAge time.Duration         `json:"clock_max_age,omitempty"`
	Clock       func() (int64, error) `json:"-"`
	// Kind is how a GPU executor copies (transfer.CE or transfer.SM; empty: CE); the fake
	// device does not read it.
	Kind transfer.Kind `json:"kind,omitempty"`
	// Buffers are the destinations of this worker's copies to endpoints of other workers: a
	// buffer the receiving worker's engine exported for it (transfer.Engine.Export), as large as
	// the pair's largest copy. A GPU executor imports them; the fake device does not copy.
	Buffers []Buffer `json:"buffers,omitempty"`
}

// Buffer is the exported destination of copies from endpoint Src to endpoint Dst.
type Buffer struct {
	Src    int    `json:"src"`
	Dst    int    `json:"dst"`
	Handle []byte `json:"handle"`
}

// Check validates w against m and p, as Execute does before it arms: for an executor of
// another device.
func (w Work) Check(m *Mem, p *program.Program) error { return check(m, p, w) }

// Execute runs w's endpoints of p on a fake device spinning on CLOCK_MONOTONIC, its waits and
// stamps in m: it arms, waits for the host's start instant, and then, for each endpoint in
// turn, waits for the flags of its next step, for the clock to reach the latest of their ends
// (and the start), copies for the circuit's duration, and writes the stamps and the flag. It
// returns once its endpoints are done, or with an error when ctx ends, the host aborts or the
// run's deadline passes; its status word says which.
func Execute(ctx context.Context, m *Mem, p *program.Program, w Work) (err error) {
	if err := check(m, p, w); err != nil {
		return err
	}
	x := &worker{m: m, p: p, w: w, pc: make([]int, len(w.Endpoints)), state: make([]uint32, len(w.Endpoints)),
		rec: make([]Record, len(w.Endpoints))}
	for i, e := range w.Endpoints {
		x.setState(i, Waiting)
		if len(p.Endpoints[e]) == 0 {
			x.setState(i, Done)
		}
	}
	defer func() {
		if err != nil {
			m.SetStatus(w.Worker, Failed)
			return
		}
		m.SetStatus(w.Worker, Finished)
	}()
	if err := x.measureClock(); err != nil {
		return err
	}
	m.Arm(w.Worker)
	start, err := x.awaitStart(ctx)
	if err != nil {
		return err
	}
	return x.run(ctx, start)
}

func check(m *Mem, p *program.Program, w Work) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if m.Dims.Endpoints != len(p.Endpoints) || m.Dims.Circuits != p.Circuits || m.Dims.Signals != len(p.Signals) {
		return fmt.Errorf("shared memory %s holds %+v, the program has %d endpoints, %d circuits, %d signals",
			m.Path, m.Dims, len(p.Endpoints), p.Circuits, len(p.Signals))
	}
	if w.Worker < 0 || w.Worker >= m.Dims.Workers || len(w.Durations) != p.Circuits {
		return fmt.Errorf("worker %d of %d with %d durations for %d circuits", w.Worker, m.Dims.Workers, len(w.Durations), p.Circuits)
	}
	for k, e := range w.Endpoints {
		if e < 0 || e >= len(p.Endpoints) || slices.Index(w.Endpoints, e) != k {
			return fmt.Errorf("worker %d: endpoint %d is out of range 0..%d or listed twice", w.Worker, e, len(p.Endpoints)-1)
		}
		for _, s := range p.Endpoints[e] {
			if d := w.Durations[s.Circuit]; d < 0 {
				return fmt.Errorf("worker %d: circuit %d has copy time %d ns", w.Worker, s.Circuit, d)
			}
		}
	}
	return nil
}

// worker is one Execute's state: per endpoint of the worker, its step, state and the stamps of
// the step under way.
type worker struct {
	m     *Mem
	p     *program.Program
	w     Work
	pc    []int
	state []uint32
	rec   []Record
}

func (x *worker) setState(i int, s uint32) {
	x.state[i] = s
	x.m.SetEndpoint(x.w.Endpoints[i], x.pc[i], s)
}

func (x *worker) measureClock() error {
	n, probe := x.w.ClockSamples, x.w.Clock
	if n <= 0 {
		n = 16
	}
	mono := func() int64 { return int64(transfer.Monotonic()) }
	if probe == nil {
		probe = func() (int64, error) { return mono(), nil }
	}
	o, err := MeasureOffset(n, mono, probe)
	if err != nil {
		return fmt.Errorf("worker %d: %w", x.w.Worker, err)
	}
	x.m.SetClock(x.w.Worker, n, o.OffsetNS, o.MinRTTNS)
	return nil
}

// awaitStart waits, sleeping, for the release and then until just before the start instant.
func (x *worker) awaitStart(ctx context.Context) (int64, error) {
	limit := x.w.ArmTimeout
	if limit <= 0 {
		limit = time.Minute
	}
	giveUp := time.Now().Add(limit)
	for {
		if s := x.m.Start(); s != 0 {
			if d := time.Duration(s-int64(transfer.Monotonic())) - 200*time.Microsecond; d > 0 {
				time.Sleep(d)
			}
			return s, nil
		}
		if err := x.alive(ctx, int64(transfer.Monotonic())); err != nil {
			return 0, err
		}
		if time.Now().After(giveUp) {
			return 0, fmt.Errorf("worker %d: the host did not start the run within %v of arming", x.w.Worker, limit)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// alive is the check a worker makes now and then: the context, the host's abort, the deadline.
func (x *worker) alive(ctx context.Context, now int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("worker %d: %w", x.w.Worker, err)
	}
	if x.m.Aborted() {
		return fmt.Errorf("worker %d: %w", x.w.Worker, ErrAborted)
	}
	if d := x.m.Deadline(); x.m.Start() != 0 && now > d {
		return fmt.Errorf("worker %d: the run's deadline passed with endpoint steps %v of %v unfinished", x.w.Worker, x.pc, x.w.Endpoints)
	}
	return nil
}

func (x *worker) run(ctx context.Context, start int64) error {
	idleSince := int64(-1)
	for iter := 0; ; iter++ {
		gen := x.m.Generation() // before the flags are read: a flag written later changes it
		now := int64(transfer.Monotonic())
		if iter&1023 == 0 {
			if err := x.alive(ctx, now); err != nil {
				return err
			}
		}
		done, next, polling := true, int64(-1), false
		moved := false
		for i := range x.w.Endpoints {
			before := x.pc[i]<<2 | int(x.state[i])
			x.step(i, now, start)
			moved = moved || x.pc[i]<<2|int(x.state[i]) != before
			switch x.state[i] {
			case Done:
				continue
			case Waiting:
				polling = true
			case Timing:
				next = minPos(next, x.rec[i].Target)
			case Copying:
				next = minPos(next, x.rec[i].End)
			}
			done = false
		}
		if done {
			return nil
		}
		// Every endpoint waits for another process's flag: spin a while (the flag is often
		// due within microseconds), then sleep until a flag is written.
		if polling && next < 0 && !moved && !x.w.SpinOnly {
			if idleSince < 0 {
				idleSince = now
			} else if now-idleSince > int64(spinBeforeSleep) {
				x.m.Sleep(gen, time.Millisecond)
				idleSince = -1
				iter |= 1023
			}
			continue
		}
		idleSince = -1
		if x.w.Sleep > 0 && !polling && next > 0 {
			// In slices of at most maxSleep, so that an abort is seen within one.
			if d := time.Duration(next-int64(transfer.Monotonic())) - x.w.Sleep; d > 0 {
				time.Sleep(min(d, maxSleep))
				iter |= 1023 // look at the abort word next
			}
		}
	}
}

// spinBeforeSleep is how long a worker (or the host) with nothing to do but wait for a flag
// spins before it sleeps on the generation word.
const spinBeforeSleep = 50 * time.Microsecond

// maxSleep is the longest a worker sleeps before it looks at the abort word again.
const maxSleep = 10 * time.Millisecond

func minPos(a, b int64) int64 {
	if a < 0 || b < a {
		return b
	}
	return a
}

// step moves endpoint i on as far as the clock (now) and the flags allow.
func (x *worker) step(i int, now, start int64) {
	e := x.w.Endpoints[i]
	for x.state[i] != Done {
		s := &x.p.Endpoints[e][x.pc[i]]
		r := &x.rec[i]
		switch x.state[i] {
		case Waiting:
			t, ok := x.target(s, start)
			if !ok {
				return
			}
			r.Target = t
			x.setState(i, Timing)
		case Timing:
			if now < r.Target {
				return
			}
			r.Start, r.End = now, now+x.w.Durations[s.Circuit]
			x.setState(i, Copying)
		case Copying:
			if now < r.End {
				return
			}
			// The flag after the stamps, the endpoint's next step after the flag: a host that
			// sees the endpoint waiting at the next step sees this circuit ended.
			x.m.EndCircuit(int(s.Circuit), *r)
			x.pc[i]++
			if x.pc[i] == len(x.p.Endpoints[e]) {
				x.setState(i, Done)
			} else {
				x.setState(i, Waiting)
			}
		}
	}
}

// target is the latest end of s's waits (and the start), once every one of them is flagged.
func (x *worker) target(s *program.Step, start int64) (int64, bool) {
	t := start
	for _, a := range s.After {
		end, ok := x.m.CircuitEnd(int(a))
		if !ok {
			return 0, false
		}
		t = max(t, end)
	}
	for _, g := range s.Signals {
		end, ok := x.m.SignalEnd(int(g))
		if !ok {
			return 0, false
		}
		t = max(t, end)
	}
	return t, true
}
