package hil

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/hil/delay"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Transfers moves the bytes of one circuit, for real or on a fake engine. The live runner calls
// Transfer from several goroutines at once, never twice at once for one transmitter.
type Transfers interface {
	// Transfer copies bytes from endpoint src to endpoint dst and returns the copy's host-clock
	// span as transfer.Monotonic readings. end may lie in the future when Transfer returns (the
	// fake engine draws a time instead of taking it); the circuit then ends at end.
	Transfer(ctx context.Context, src, dst int, bytes int64) (start, end time.Duration, err error)
}

// Switches is what the live runner needs of a switch controller (switchctl.Controller has it).
type Switches interface {
	// Apply puts every switch of the batch in its state and returns once all have settled.
	Apply(ctx context.Context, changes []switchctl.Change) error
	// Halt puts the hardware in its safe state.
	Halt(ctx context.Context) error
}

// Env is what one replay drives.
type Env struct {
	// Transfers carries the circuits (required).
	Transfers Transfers
	// Switches, when not nil, receives every switch change the walker emits, one Apply per
	// command; the reconfiguration then lasts as long as the controller takes to settle. Nil
	// injects AlphaR per command instead. Only Beneš schedules have switches to drive.
	Switches Switches
	// SwitchLog is the change log Switches was opened with; when set, a command's start and end
	// are its changes' Commanded and Settled times (the controller's own account), otherwise the
	// Apply call and its return.
	SwitchLog *switchctl.ChangeLog
	// AlphaR is the reconfiguration delay injected per command when Switches is nil (parallel
	// model: commands overlap, each lasts AlphaR from its dispatch).
	AlphaR time.Duration
	// Injector waits for injected delays and for fake copies' ends.
	Injector delay.Injector
	// Progress, when set, is called from the replay's goroutine after every circuit completion
	// with the number completed and the total (a compiled replay calls it for every circuit
	// once the device has finished: the host does not follow the circuits as they run).
	Progress func(done, total int)
	// Device, when set and Switches is not, runs the schedule compiled (ReplayCompiled): the
	// host starts the programs and reads the stamps back. Real switch boards keep the
	// host-driven loop (Replay), which sends each command when the walker emits it.
	Device Device
}

// CommandRecord is one reconfiguration command as the live run carried it out.
type CommandRecord struct {
	ID        int                `json:"id"`
	Requested float64            `json:"requested"`
	Start     float64            `json:"start"`
	End       float64            `json:"end"`
	Changes   []switchctl.Change `json:"-"`
	// Switches lists the changes as "stage:index=state" (on a crossbar, the re-pointings as
	// "txI→rxJ").
	Switches []string `json:"switches"`
}

// CircuitRecord is what was measured of one circuit that ran.
type CircuitRecord struct {
	Circuit       int     `json:"circuit"`
	TransmitStart float64 `json:"transmit_start"`
	End           float64 `json:"end"`
}

// Live is one schedule's live execution. Times are seconds from the replay's start (T0).
type Live struct {
	// T0 is the Monotonic reading the run's times count from.
	T0 time.Duration `json:"-"`
	// Timeline and Counts are the walker's, once every circuit completed (nil after a failure).
	Timeline *schedules.Timeline `json:"-"`
	Counts   emulator.Counts     `json:"-"`
	// Circuits are the circuits that completed, in order of completion; Commands the commands
	// that settled, in order of settling. They are kept when the run is cut short.
	Circuits []CircuitRecord `json:"circuits"`
	Commands []CommandRecord `json:"commands"`
	// Wall is how long the replay took.
	Wall time.Duration `json:"-"`
	// Execution is ExecCompiled or ExecHostDriven.
	Execution string `json:"execution"`
	// HarnessCost is, per circuit (indexed by circuit, NaN for one that did not start), how long
	// after its waits ended it started: from its last dependency's end (plus the modelled delay,
	// where it waited on a reconfiguration) to its start.
	HarnessCost []float64 `json:"-"`
	// Clocks are the devices' clock offsets from CLOCK_MONOTONIC, measured at the start of a
	// compiled replay across worker processes (one per worker), with their uncertainty.
	Clocks []shared.Offset `json:"clocks,omitempty"`
	// Stalls are the executor's spin-loop stalls (program.Stalls), where it records them: the
	// in-process fake device in real time.
	Stalls *program.Stalls `json:"stalls,omitempty"`
}

// minProcs is the fewest Go processors (GOMAXPROCS) a replay runs with.
const minProcs = 4

// event is what the replay's goroutine waits for: a copy that returned, or a controller that
// settled a command.
type event struct {
	circuit    int // −1 for a command
	cmd        int
	start, end time.Duration // Monotonic
	err        error
}

// deadline is something due at a Monotonic instant: a copy ending (circuit ≥ 0) or an injected
// delay ending (command cmd).
type deadline struct {
	at         time.Duration
	circuit    int
	cmd        int
	start, end time.Duration
}

// Replay executes s live: the emulator's walker decides what is ready and what to command; this
// loop only starts transfers, sends commands to the controller or injects the delay, waits for
// real completions and feeds their times back. It returns what was measured; when it fails or ctx
// ends, the Live holds the circuits and commands completed so far (and Timeline is nil), and the
// switches have been put safe.
func Replay(ctx context.Context, s *schedules.Schedule, env Env) (*Live, error) {
	if env.Transfers == nil {
		return nil, errors.New("hil: replay needs a transfer engine")
	}
	if env.Switches != nil && s.Fabric != schedules.Benes {
		return nil, fmt.Errorf("hil: schedule %q runs on a %s fabric, which has no switches to drive; replay it without a switch controller", s.Algorithm, s.Fabric)
	}
	o, err := emulator.NewOrder(s)
	if err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	// The waiter spins on one processor (package delay) while copies are started and switch
	// commands sent on others; with fewer than four, a spinning controller or engine (the fakes
	// wait precisely too) leaves the rest of the replay waiting for a processor, milliseconds at
	// a time. The setting is the process's; it is put back afterwards.
	if n := runtime.GOMAXPROCS(0); n < minProcs {
		runtime.GOMAXPROCS(minProcs)
		defer runtime.GOMAXPROCS(n)
	}
	r := &replay{s: s, o: o, w: emulator.NewWalker(o), env: env, events: make(chan event, len(s.Circuits)+16)}
	live, err := r.run(ctx)
	if err != nil && env.Switches != nil {
		// Whatever went wrong, the switches end safe; the hardware must get there even when ctx
		// has ended.
		sctx, cancel := switchctl.SafeContext(ctx)
		if herr := env.Switches.Halt(sctx); herr != nil {
			err = errors.Join(err, fmt.Errorf("hil: putting the switches safe: %w", herr))
		}
		cancel()
	}
	return live, err
}

type replay struct {
	s      *schedules.Schedule
	o      *emulator.Order
	w      *emulator.Walker
	env    Env
	events chan event
	t0     time.Duration
	// due are the deadlines not yet reached, unordered (there are at most a few dozen).
	due []deadline
	// outstanding counts goroutines (copies, controller commands) that will still send an event.
	outstanding int
	requested   map[int]float64
	starts      []float64
	changes     map[int][]switchctl.Change
	repoint     map[int][]string
	live        *Live
	station     chan command
	// readyAt is when each circuit's waits ended (the event that made the walker release it).
	readyAt []float64
}

func (r *replay) sec(t time.Duration) float64 { return (t - r.t0).Seconds() }

func (r *replay) run(ctx context.Context) (*Live, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.requested, r.changes, r.repoint = map[int]float64{}, map[int][]switchctl.Change{}, map[int][]string{}
	r.starts = make([]float64, len(r.s.Circuits))
	r.readyAt = make([]float64, len(r.s.Circuits))
	r.t0 = transfer.Monotonic()
	r.live = &Live{T0: r.t0, Circuits: []CircuitRecord{}, Commands: []CommandRecord{}, Execution: ExecHostDriven}
	if r.env.Switches != nil {
		r.station = make(chan command, r.o.NumEpochs()+1)
		go r.feed(ctx)
		defer close(r.station)
	}
	err := r.loop(ctx)
	if err != nil {
		cancel()
		// Let the goroutines still out finish (cancelled), so nothing outlives the replay.
		for ; r.outstanding > 0; r.outstanding-- {
			<-r.events
		}
	}
	r.live.Wall = transfer.Monotonic() - r.t0
	r.live.HarnessCost = make([]float64, len(r.starts))
	for c := range r.starts {
		r.live.HarnessCost[c] = math.NaN()
	}
	for _, rec := range r.live.Circuits {
		r.live.HarnessCost[rec.Circuit] = rec.TransmitStart - r.readyAt[rec.Circuit]
	}
	if err != nil {
		return r.live, err
	}
	tl, err := r.w.Timeline()
	if err != nil {
		return r.live, fmt.Errorf("hil: internal error: %w", err)
	}
	r.live.Timeline, r.live.Counts = tl, r.w.Counts()
	return r.live, nil
}

func (r *replay) loop(ctx context.Context) error {
	ready, err := r.w.Start()
	if err != nil {
		return err
	}
	r.launch(ctx, ready)
	total := len(r.s.Circuits)
	for {
		if err := r.flush(ctx); err != nil {
			return err
		}
		if r.w.Done() {
			return nil
		}
		// The next thing due: a deadline, or a barrier round that must last its planned time.
		// k indexes r.due; −2 is the round, −1 nothing.
		k, next := -1, time.Duration(0)
		for i, d := range r.due {
			if k == -1 || d.at < next {
				k, next = i, d.at
			}
		}
		if t, ok := r.w.Pending(); ok {
			if at := r.t0 + seconds(t); k == -1 || at < next {
				k, next = -2, at
			}
		}
		if k == -1 && r.outstanding == 0 {
			return fmt.Errorf("hil: internal error: the walk is not done and nothing is under way")
		}
		var dl time.Time
		if k != -1 {
			// The deadline on Go's clock. CLOCK_MONOTONIC is read first, so that a delay between
			// the two readings makes the wait end late, never before the deadline.
			mono := transfer.Monotonic()
			dl = time.Now().Add(next - mono)
		}
		ev, got, _, err := delay.Await(ctx, r.env.Injector, dl, r.events)
		if err != nil {
			return err
		}
		if !got {
			if k == -2 {
				continue // a barrier round is due: flush it
			}
			d := r.due[k]
			r.due[k] = r.due[len(r.due)-1]
			r.due = r.due[:len(r.due)-1]
			if d.circuit >= 0 {
				ready, err = r.complete(d.circuit, d.end)
			} else {
				ready, err = r.settled(d.cmd, d.start, d.end)
			}
			if err != nil {
				return err
			}
			if d.circuit >= 0 && r.env.Progress != nil {
				r.env.Progress(len(r.live.Circuits), total)
			}
			r.launch(ctx, ready)
			continue
		}
		r.outstanding--
		if ev.err != nil {
			return ev.err
		}
		if ev.circuit >= 0 {
			if err := r.w.Started(ev.circuit, r.sec(ev.start)); err != nil {
				return fmt.Errorf("hil: internal error: %w", err)
			}
			r.starts[ev.circuit] = r.sec(ev.start)
			if ev.end > transfer.Monotonic() {
				r.due = append(r.due, deadline{at: ev.end, circuit: ev.circuit, start: ev.start, end: ev.end})
				continue
			}
			ready, err = r.complete(ev.circuit, ev.end)
			if err == nil && r.env.Progress != nil {
				r.env.Progress(len(r.live.Circuits), total)
			}
		} else {
			ready, err = r.settled(ev.cmd, ev.start, ev.end)
		}
		if err != nil {
			return err
		}
		r.launch(ctx, ready)
	}
}

func seconds(t float64) time.Duration { return time.Duration(t * 1e9) }

// complete reports circuit c's end to the walker.
func (r *replay) complete(c int, end time.Duration) ([]int32, error) {
	ready, err := r.w.Completed(c, r.sec(end))
	if err != nil {
		return nil, fmt.Errorf("hil: internal error: %w", err)
	}
	for _, x := range ready {
		r.readyAt[x] = r.sec(end)
	}
	r.live.Circuits = append(r.live.Circuits, CircuitRecord{Circuit: c, TransmitStart: r.starts[c], End: r.sec(end)})
	return ready, nil
}

// settled reports command id's span to the walker.
func (r *replay) settled(id int, start, end time.Duration) ([]int32, error) {
	st, en := r.sec(start), r.sec(end)
	req := r.requested[id]
	// A command cannot have begun before it was requested: a controller whose log is a little
	// ahead of this process's reading is held to the request.
	st = max(st, req)
	en = max(en, st)
	ready, err := r.w.Settled(id, st, en)
	if err != nil {
		return nil, fmt.Errorf("hil: internal error: %w", err)
	}
	for _, x := range ready {
		r.readyAt[x] = en
	}
	rec := CommandRecord{ID: id, Requested: req, Start: st, End: en, Changes: r.changes[id], Switches: []string{}}
	for _, ch := range rec.Changes {
		rec.Switches = append(rec.Switches, ch.String())
	}
	rec.Switches = append(rec.Switches, r.repoint[id]...)
	r.live.Commands = append(r.live.Commands, rec)
	return ready, nil
}

// launch starts the transfers of circuits that became ready.
func (r *replay) launch(ctx context.Context, ready []int32) {
	for _, x := range ready {
		c := int(x)
		ct := r.s.Circuits[c]
		r.outstanding++
		go func() {
			start, end, err := r.env.Transfers.Transfer(ctx, ct.Src, ct.Dst, ct.Bytes)
			if err != nil {
				err = fmt.Errorf("hil: circuit %d (%d→%d, %d bytes): %w", c, ct.Src, ct.Dst, ct.Bytes, err)
			}
			r.events <- event{circuit: c, start: start, end: end, err: err}
		}()
	}
}

// flush sends every command the walker has due now.
func (r *replay) flush(ctx context.Context) error {
	for {
		t, ok := r.w.Pending()
		// In partial mode what is pending was requested by a completion already reported, so it
		// is due now; a barrier round may be due later (it lasts at least its planned time).
		if !ok || r.o.Mode() == schedules.Barrier && r.t0+seconds(t) > transfer.Monotonic() {
			return nil
		}
		cmd, _ := r.w.Flush()
		r.requested[cmd.ID] = cmd.Requested
		now := transfer.Monotonic()
		if len(cmd.Epochs) == 0 {
			// A barrier round with no change starts at once.
			at := r.t0 + seconds(cmd.Requested)
			ready, err := r.settled(cmd.ID, at, at)
			if err != nil {
				return err
			}
			r.launch(ctx, ready)
			continue
		}
		var changes []switchctl.Change
		var repoint []string
		for _, e := range cmd.Epochs {
			ep := r.o.Epoch(int(e))
			if ep.Stage < 0 {
				// A crossbar transmitter re-pointing: nothing to command, only its delay.
				repoint = append(repoint, fmt.Sprintf("tx%d→rx%d", ep.Switch, ep.Dst))
				continue
			}
			changes = append(changes, switchctl.Change{Switch: switchctl.Addr{Stage: ep.Stage, Index: ep.Switch}, State: switchctl.State(ep.To)})
		}
		r.changes[cmd.ID], r.repoint[cmd.ID] = changes, repoint
		if r.env.Switches == nil {
			// The injected delay: α_r from now, waited for precisely with everything else.
			r.due = append(r.due, deadline{at: now + r.env.AlphaR, circuit: -1, cmd: cmd.ID, start: now, end: now + r.env.AlphaR})
			continue
		}
		r.outstanding++
		r.station <- command{id: cmd.ID, changes: changes}
	}
}

// command is one batch for the controller.
type command struct {
	id      int
	changes []switchctl.Change
}

// feed sends the commands to the controller one at a time, in order of request. A controller's
// Apply returns once its batch has settled, and two batches in flight at once could reach the
// hardware in either order; one at a time, the hardware sees the commands in the timeline's
// order (SerialControllerModel predicts exactly this). Every command gets its event, also after
// a failure, so that the replay's count of what is outstanding stays right.
func (r *replay) feed(ctx context.Context) {
	for c := range r.station {
		if err := ctx.Err(); err != nil {
			r.events <- event{circuit: -1, cmd: c.id, err: err}
			continue
		}
		before := 0
		if r.env.SwitchLog != nil {
			before = r.env.SwitchLog.Len()
		}
		start := transfer.Monotonic()
		err := r.env.Switches.Apply(ctx, c.changes)
		end := transfer.Monotonic()
		if err != nil {
			r.events <- event{circuit: -1, cmd: c.id, err: fmt.Errorf("hil: switch command %d (%d changes): %w", c.id, len(c.changes), err)}
			continue
		}
		if r.env.SwitchLog != nil {
			start, end = logSpan(r.env.SwitchLog.Entries(before), c.changes, start, end)
		}
		r.events <- event{circuit: -1, cmd: c.id, start: start, end: end}
	}
}

// logSpan finds the change log's account of a batch in the entries added while it was applied
// (commands go one at a time): the latest entry of each change, from when the first was
// commanded to when the last settled, converted to Monotonic readings through the Go clock
// (whose readings carry the same monotonic clock). Without entries for every change it keeps the
// call's own span.
func logSpan(entries []switchctl.Entry, changes []switchctl.Change, callStart, callEnd time.Duration) (time.Duration, time.Duration) {
	var first, last time.Time
	found := 0
	for _, ch := range changes {
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			if e.Halt || e.Switch != ch.Switch || e.State != ch.State {
				continue
			}
			if first.IsZero() || e.Commanded.Before(first) {
				first = e.Commanded
			}
			if e.Settled.After(last) {
				last = e.Settled
			}
			found++
			break
		}
	}
	if found != len(changes) || first.IsZero() || last.IsZero() {
		return callStart, callEnd
	}
	// Map Go times to Monotonic through one paired reading.
	nowGo, nowMono := time.Now(), transfer.Monotonic()
	start := nowMono - nowGo.Sub(first)
	end := nowMono - nowGo.Sub(last)
	// The log cannot place a change outside the call that made it.
	start = min(max(start, callStart), callEnd)
	end = min(max(end, start), callEnd)
	return start, end
}
