package worker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
)

// A worker of an engine with no compiled executor refuses a job, saying to run with --fake; on
// the fake engine it runs the job (here one that the host never releases, so it gives up at
// its arming timeout with the fake device's own error).
func TestRunJobEngines(t *testing.T) {
	p := &program.Program{Circuits: 1, Endpoints: [][]program.Step{{{Circuit: 0, Dst: 0, Bytes: 1}}}}
	d := shared.Dims{Endpoints: 1, Circuits: 1, Workers: 1}
	m, err := shared.Create(filepath.Join(t.TempDir(), "shm"), d)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	job := &shared.Job{Path: m.Path, Dims: d, Program: p, Work: shared.Work{Endpoints: []int{0}, Durations: []int64{1}, ArmTimeout: 50 * time.Millisecond}}
	err = runJob(context.Background(), Config{Engine: "cuda"}, job)
	if err == nil || !strings.Contains(err.Error(), "--fake") {
		t.Errorf("cuda engine: %v", err)
	}
	err = runJob(context.Background(), Config{Engine: "fake"}, job)
	if err == nil || !strings.Contains(err.Error(), "did not start the run") {
		t.Errorf("fake engine, never released: %v", err)
	}
	if err := runJob(context.Background(), Config{Engine: "fake"}, nil); err == nil {
		t.Error("a run request without a job was accepted")
	}
}
