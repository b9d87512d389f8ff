package shared

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/program"
)

// Job is everything a worker process needs for its share of a run: where the shared memory is,
// its sizes, the program and the worker's work. It travels as JSON (a worker request).
type Job struct {
	Path    string           `json:"path"`
	Dims    Dims             `json:"dims"`
	Program *program.Program `json:"program"`
	Work    Work             `json:"work"`
}

// Run maps the job's shared memory, executes the worker's share on the fake device and unmaps.
func (j Job) Run(ctx context.Context) error {
	if j.Program == nil {
		return errors.New("shared: a job without a program")
	}
	m, err := Open(j.Path, j.Dims)
	if err != nil {
		return err
	}
	err = Execute(ctx, m, j.Program, j.Work)
	if cerr := m.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("unmapping %s: %w", j.Path, cerr))
	}
	return err
}

// Split gives each worker its endpoints: worker w runs the endpoints e with of[e] == w, in order.
func Split(of []int, workers int) ([][]int, error) {
	out := make([][]int, workers)
	for e, w := range of {
		if w < 0 || w >= workers {
			return nil, fmt.Errorf("shared: endpoint %d is on worker %d, but there are workers 0..%d", e, w, workers-1)
		}
		out[w] = append(out[w], e)
	}
	return out, nil
}
