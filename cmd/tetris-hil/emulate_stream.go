package main

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
)

// runInputs are the input files a run record names, with their hashes.
func (f *emulateFlags) runInputs() ([]provenance.Input, error) {
	inputs, err := describeInputs([2]string{"demand", f.src.path}, [2]string{"schedule", f.schedule},
		[2]string{"calibration", f.models.calibration}, [2]string{"measured", f.models.measured},
		[2]string{"switch_bench", f.models.switchBench.path})
	if err != nil {
		return nil, err
	}
	if f.schedule != "" && f.src.path == "" {
		inputs = inputs[1:] // a schedule file alone: no demand was read
	}
	return inputs, nil
}

// runStream writes each planned run's timeline files (--timeline) and chart (--gantt) as soon as
// the run finishes (experiment.Config.Stream), so that emulate holds the runs under way rather
// than every run to the end: the files are those experiment.WriteTimelines and WriteGantts would
// write after the last run, byte for byte.
type runStream struct {
	ctx         context.Context
	dir, gantt  string
	ganttFormat string
	names       []string
	exec        emulator.Config
	inputs      []provenance.Input
	tw          *experiment.TimelineWriter
}

func (f *emulateFlags) newRunStream(ctx context.Context, ms []experiment.Matrix, cfg experiment.Config) (*runStream, error) {
	inputs, err := f.runInputs()
	if err != nil {
		return nil, err
	}
	s := &runStream{ctx: ctx, dir: f.timelineDir, gantt: f.gantt, ganttFormat: f.ganttFormat, exec: cfg.Exec, inputs: inputs}
	// Records come matrices first, algorithms within (experiment.Outcome.Records).
	for _, m := range ms {
		for _, a := range cfg.Algorithms {
			s.names = append(s.names, (&experiment.Record{Algorithm: a, Matrix: m.Ref}).Name())
		}
	}
	return s, nil
}

// write is experiment.Config.Stream. The timeline directory is prepared (manifest marked
// incomplete, stale files removed) when the first run finishes: a run refused before planning
// leaves it untouched.
func (s *runStream) write(_ int, r *experiment.Record) error {
	if s.dir != "" {
		if s.tw == nil {
			tw, err := experiment.NewTimelineWriter(s.dir, s.names, s.exec, provenance.Tool(), s.inputs)
			if err != nil {
				return fmt.Errorf("--timeline %s: %w", s.dir, err)
			}
			s.tw = tw
		}
		if err := s.tw.Write(s.ctx, r); err != nil {
			return fmt.Errorf("--timeline %s: %w", s.dir, err)
		}
	}
	if s.gantt != "" {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if err := experiment.WriteGantt(s.gantt, s.ganttFormat, r, len(s.names) > 1); err != nil {
			return fmt.Errorf("--gantt %s: %w", s.gantt, err)
		}
	}
	return nil
}

// close marks the timeline directory's manifest complete, every run written.
func (s *runStream) close() error {
	if s.tw == nil {
		return nil
	}
	if err := s.tw.Close(); err != nil {
		return fmt.Errorf("--timeline %s: %w", s.dir, err)
	}
	return nil
}
