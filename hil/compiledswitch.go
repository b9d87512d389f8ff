package hil

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

// ApplyingDevice is a Device whose station runs on a host thread of its own, which can carry
// each reconfiguration command out on real switches without holding up the endpoints' programs
// (ProcessDevice: the programs run in worker processes).
type ApplyingDevice interface {
	Device
	ExecuteApplying(ctx context.Context, p *program.Program, st program.Station, apply func(context.Context, program.Command) error) (*program.Stamps, error)
}

// ReplayCompiledSwitches is ReplayCompiled with the switch commands issued on sw by the host
// thread that watches the stamps: each command goes to the controller at the start the
// station's model gives it (reconfig, which for a real controller is its own model, e.g.
// SerialControllerModel) and ends when the controller's Apply returns, not before the model's
// end; the circuits that wait for it start from then. Commands go one at a time, in order of
// issue, as the host-driven replay sends them. On an error the switches are halted.
func ReplayCompiledSwitches(ctx context.Context, s *schedules.Schedule, dev ApplyingDevice, reconfig emulator.ReconfigModel, sw Switches) (*Live, error) {
	if dev == nil || reconfig == nil || sw == nil {
		return nil, errors.New("hil: a compiled replay on switches needs a device, a reconfiguration model and a controller")
	}
	if s.Fabric != schedules.Benes {
		return nil, fmt.Errorf("hil: %s: a switch controller drives a Beneš fabric, this schedule is for %s", s.Algorithm, s.Fabric)
	}
	live, err := replayCompiled(ctx, s, reconfig, func(o *emulator.Order, p *program.Program, st program.Station) (*program.Stamps, error) {
		return dev.ExecuteApplying(ctx, p, st, func(ctx context.Context, cmd program.Command) error {
			changes := commandChanges(o, cmd)
			if len(changes) == 0 {
				return nil
			}
			if err := sw.Apply(ctx, changes); err != nil {
				return fmt.Errorf("switch command of %d changes: %w", len(changes), err)
			}
			return nil
		})
	})
	if err != nil {
		sctx, cancel := switchctl.SafeContext(ctx)
		defer cancel()
		if herr := sw.Halt(sctx); herr != nil {
			err = errors.Join(err, fmt.Errorf("hil: halting the switches: %w", herr))
		}
	}
	return withClocks(live, dev), err
}

// commandChanges are the switch changes a command carries (a crossbar's re-pointings carry none).
func commandChanges(o *emulator.Order, cmd program.Command) []switchctl.Change {
	var out []switchctl.Change
	for _, e := range commandEpochs(o, cmd) {
		if ep := o.Epoch(e); ep.Stage >= 0 {
			out = append(out, switchctl.Change{Switch: switchctl.Addr{Stage: ep.Stage, Index: ep.Switch}, State: switchctl.State(ep.To)})
		}
	}
	return out
}
