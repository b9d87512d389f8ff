package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/hil"
)

// startProcessDevice starts one pinned worker per GPU that runs the compiled programs of its
// endpoints (--process-per-gpu): on a fake device under --fake, else as CUDA stream programs on
// its GPU; with --wiring the host thread that watches the stamps sends the switch commands.
func (r *replayRun) startProcessDevice() error {
	f, ctx, inv := r.f, r.ctx, r.inv
	exe, err := os.Executable()
	if err != nil {
		return errors.Join(fmt.Errorf("finding this binary to start workers: %w", err), restore(r.cfg.Clocks))
	}
	bc := bench.Config{Lib: r.lib, Engine: r.engine, EngineOptions: r.engineOpts, Command: []string{exe, "worker"},
		Visible: cudaVisible(), Unpinned: f.unpinned, Timeout: secondsToDuration(r.callTimeout), Log: os.Stderr, Kind: r.kind}
	logger.Info().Int("endpoints", len(r.gpuOf)).Int("gpus", len(distinct(r.gpuOf))).Msg("starting one worker per GPU for the compiled programs")
	var dur func(int, int, int64) (float64, error) // on GPUs, copies take what they take
	if f.ff.fake {
		dur = hil.FakeTransferModel(r.fakeModel, r.gpuOf).Seconds
	}
	dev, err := hil.StartProcessDevice(ctx, bc, r.gpuOf, dur, r.injector.SleepThreshold)
	if err != nil {
		return errors.Join(err, restore(r.cfg.Clocks))
	}
	r.closers = append(r.closers, func() {
		if err := dev.Close(); err != nil && ctx.Err() == nil {
			logger.Error().Err(err).Msg("stopping the workers")
		}
	})
	r.env.Device = dev
	r.cfg.LiveTransfer = "measured: fake devices in worker processes, one per GPU, running the compiled programs (flags and stamps in shared memory), copies of exactly α + bytes/B"
	if !f.ff.fake {
		r.cfg.LiveTransfer = fmt.Sprintf("measured: compiled stream programs in worker processes, one per GPU (%d), flags and stamps in shared memory registered with each GPU, %%globaltimer stamps put on one clock by each GPU's measured offset, %s copies (across GPUs into buffers exported by CUDA IPC)",
			len(distinct(r.gpuOf)), r.kind)
	}
	cpus := dev.CPUs()
	for e, g := range r.gpuOf {
		r.man.Endpoints = append(r.man.Endpoints, hil.Endpoint{Endpoint: e, GPU: g, BusID: inv.GPUs[g].PCIBusID, CPUs: cpus[g]})
	}
	return nil
}
