package worker

import "os"

// Dead and ProcessState let the external tests see a worker process's end.
func (w *Worker) Dead() <-chan struct{}          { return w.dead }
func (w *Worker) ProcessState() *os.ProcessState { return w.cmd.ProcessState }
