package worker

import (
	"context"
	"encoding/json"
	"io"
	"os"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Dead and ProcessState let the external tests see a worker process's end.
func (w *Worker) Dead() <-chan struct{}          { return w.dead }
func (w *Worker) ProcessState() *os.ProcessState { return w.cmd.ProcessState }

// ServeForFuzz runs the worker's request loop on eng: the protocol reader without a process.
func ServeForFuzz(ctx context.Context, eng transfer.Engine, in io.Reader, out io.Writer) error {
	return serve(ctx, Config{}, eng, in, json.NewEncoder(out))
}
