package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
)

// runJob runs the worker's share of a compiled replay. On the fake engine that is the fake
// device spinning on CLOCK_MONOTONIC (shared.Job.Run); an engine that runs the programs on its
// GPU registers its executor with shared.RegisterExecutor.
func runJob(ctx context.Context, cfg Config, job *shared.Job) error {
	if job == nil {
		return errors.New("run request without a job")
	}
	if cfg.Engine == "fake" {
		return job.Run(ctx)
	}
	exec, ok := shared.Executor(cfg.Engine)
	if !ok {
		return fmt.Errorf("GPU %d: a compiled replay across worker processes on the %s engine is not built into this binary; run with --fake to replay on the fake device", cfg.Device.GPU, cfg.Engine)
	}
	return exec(ctx, cfg.Device, *job)
}

// Run runs this worker's share of a compiled replay and returns once it is done; the host
// watches its progress in the job's shared memory meanwhile. timeout bounds the call (zero: the
// worker's default).
func (w *Worker) Run(ctx context.Context, job shared.Job, timeout time.Duration) error {
	_, err := w.Call(ctx, Request{Op: OpRun, Job: &job}, timeout)
	return err
}
