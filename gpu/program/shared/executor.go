package shared

import (
	"context"
	"sync"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// ExecFunc runs a job's share on the GPU dev in the calling worker process.
type ExecFunc func(ctx context.Context, dev transfer.Device, job Job) error

var (
	execMu    sync.Mutex
	executors = map[string]ExecFunc{}
	releasers = map[string]func() error{}
)

// RegisterRelease makes fn what releases the state the named engine's executor keeps from one
// job to the next (an opened GPU), called when the worker process stops.
func RegisterRelease(engine string, fn func() error) {
	execMu.Lock()
	defer execMu.Unlock()
	releasers[engine] = fn
}

// ReleaseExecutor releases what the named engine's executor kept open, if anything.
func ReleaseExecutor(engine string) error {
	execMu.Lock()
	fn := releasers[engine]
	execMu.Unlock()
	if fn == nil {
		return nil
	}
	return fn()
}

// RegisterExecutor makes fn the executor for jobs in workers of the named transfer engine.
func RegisterExecutor(engine string, fn ExecFunc) {
	execMu.Lock()
	defer execMu.Unlock()
	executors[engine] = fn
}

// Executor is the executor registered for engine.
func Executor(engine string) (ExecFunc, bool) {
	execMu.Lock()
	defer execMu.Unlock()
	fn, ok := executors[engine]
	return fn, ok
}
