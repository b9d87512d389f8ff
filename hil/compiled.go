package hil

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Device runs compiled programs without the host on the critical path and returns their stamps:
// program.Fake (one spinning thread, or virtual time), or GPUs (package gpu/program/cudaprog).
type Device interface {
	Execute(ctx context.Context, p *program.Program, st program.Station) (*program.Stamps, error)
}

// Execution modes of a replay, in its summary.
const (
	ExecCompiled   = "compiled"
	ExecHostDriven = "host-driven"
)

// FakeDevice is the fake device for a replay on the fake engine's model m: a copy between
// endpoints src and dst takes exactly the noise-free α + bytes/B of their GPUs (gpuOf), what
// FakeTransferModel predicts, so that live minus predicted is the harness's own cost. Virtual
// runs it on a virtual clock instead of the monotonic one; in real time it sleeps until sleep
// before each deadline and spins from there.
func FakeDevice(m fake.Model, gpuOf []int, virtual bool, sleep time.Duration) Device {
	tm := FakeTransferModel(m, gpuOf)
	return program.Fake{Virtual: virtual, Duration: tm.Seconds, Sleep: sleep}
}

// ReplayCompiled executes s compiled (Compile): every endpoint's program runs on dev, its
// reconfiguration commands timed by reconfig (the model the prediction uses, so that an
// injected delay is the modelled one), and the host only reads the stamps back and builds the
// Live record from them. The walker's rules are in the programs through the order they were
// compiled from; what differs from the prediction is timing alone.
func ReplayCompiled(ctx context.Context, s *schedules.Schedule, dev Device, reconfig emulator.ReconfigModel) (*Live, error) {
	if dev == nil || reconfig == nil {
		return nil, errors.New("hil: a compiled replay needs a device and a reconfiguration model")
	}
	live, err := replayCompiled(ctx, s, reconfig, func(_ *emulator.Order, p *program.Program, st program.Station) (*program.Stamps, error) {
		return dev.Execute(ctx, p, st)
	})
	return withClocks(live, dev), err
}

// withClocks records the device's clock offsets in live, where it measured any.
func withClocks(live *Live, dev Device) *Live {
	if c, ok := dev.(interface{ ClockOffsets() []shared.Offset }); ok && live != nil {
		live.Clocks = c.ClockOffsets()
	}
	return live
}

// replayCompiled compiles s, runs it through execute and builds the Live record from the stamps.
func replayCompiled(ctx context.Context, s *schedules.Schedule, reconfig emulator.ReconfigModel,
	execute func(*emulator.Order, *program.Program, program.Station) (*program.Stamps, error)) (*Live, error) {
	o, err := emulator.NewOrder(s)
	if err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	p, err := Compile(o, s)
	if err != nil {
		return nil, err
	}
	// No garbage collection while the programs run: a collection that the previous replay's
	// records left due stops the world for tens of µs, as long as a copy lasts. The device
	// allocates next to nothing while it runs.
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	t0 := transfer.Monotonic()
	st, err := execute(o, p, reconfig.NewReconfigurer())
	wall := transfer.Monotonic() - t0
	if err != nil {
		return nil, fmt.Errorf("hil: compiled replay of %s: %w", s.Algorithm, err)
	}
	if len(st.Start) != p.Circuits || len(st.End) != p.Circuits || len(st.Target) != p.Circuits || len(st.CommandOf) != len(p.Signals) {
		return nil, fmt.Errorf("hil: compiled replay of %s: the device returned stamps for %d circuits and %d signals, the program has %d and %d",
			s.Algorithm, len(st.Start), len(st.CommandOf), p.Circuits, len(p.Signals))
	}
	tl, counts := StampsTimeline(o, s, p, st)
	live := &Live{T0: t0, Timeline: tl, Counts: counts, Wall: wall, Execution: ExecCompiled,
		Circuits: make([]CircuitRecord, 0, p.Circuits), Commands: make([]CommandRecord, 0, len(st.Commands)),
		HarnessCost: make([]float64, p.Circuits), Stalls: st.Stalls}
	for c := range p.Circuits {
		live.Circuits = append(live.Circuits, CircuitRecord{Circuit: c, TransmitStart: st.Start[c], End: st.End[c]})
		live.HarnessCost[c] = st.Start[c] - st.Target[c]
	}
	// In order of completion, as the host-driven replay lists them.
	slices.SortStableFunc(live.Circuits, func(a, b CircuitRecord) int { return cmpFloat(a.End, b.End) })
	for id, cmd := range st.Commands {
		rec := CommandRecord{ID: id, Requested: cmd.Requested, Start: cmd.Start, End: cmd.End, Switches: []string{}}
		for _, e := range commandEpochs(o, cmd) {
			ep := o.Epoch(e)
			if ep.Stage < 0 {
				rec.Switches = append(rec.Switches, fmt.Sprintf("tx%d→rx%d", ep.Switch, ep.Dst))
			} else {
				ch := switchctl.Change{Switch: switchctl.Addr{Stage: ep.Stage, Index: ep.Switch}, State: switchctl.State(ep.To)}
				rec.Changes = append(rec.Changes, ch)
				rec.Switches = append(rec.Switches, ch.String())
			}
		}
		live.Commands = append(live.Commands, rec)
	}
	return live, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// HarnessCostOf summarises per-circuit harness costs (seconds from the instant a circuit's waits
// ended, its last dependency's end stamp plus the modelled delay, to its start stamp): median,
// p99 and worst.
func HarnessCostOf(costs []float64) Diff {
	finite := make([]float64, 0, len(costs))
	for _, c := range costs {
		if !math.IsNaN(c) {
			finite = append(finite, c)
		}
	}
	return DiffOf(finite)
}
