package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// demandSource is the --demand family of flags that every command reading demand shares.
type demandSource struct {
	path          string
	matrix        int
	countDiagonal bool
	maxPorts      int
}

func (s *demandSource) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.path, "demand", "", "demand file: a CSV matrix (n×n byte counts)")
	fs.IntVar(&s.matrix, "matrix", -1, "index of the one matrix to use from a multi-matrix file (default: all)")
	fs.BoolVar(&s.countDiagonal, "count-diagonal", false, "schedule local (i→i) traffic through the fabric too (default: ignored, as on a GPU server)")
	fs.IntVar(&s.maxPorts, "max-ports", schedules.DefaultMaxPorts, "reject matrices larger than this")
}

// namedDemand is one matrix with where it came from, for reports.
type namedDemand struct {
	Index  int
	Layer  int
	Phase  string
	Label  string
	Demand *schedules.Demand
}

// load returns the selected matrices.
func (s *demandSource) load() ([]namedDemand, error) {
	if s.path == "" {
		return nil, usagef("--demand: a demand file is required")
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, usagef("--demand %q: %v", s.path, err)
	}
	defer f.Close()
	d, err := schedules.ReadCSV(f, s.path, s.maxPorts)
	if err != nil {
		return nil, &usageError{err}
	}
	if s.matrix > 0 {
		return nil, usagef("--matrix %d: %s holds one matrix (index 0)", s.matrix, s.path)
	}
	d.CountDiagonal = s.countDiagonal
	return []namedDemand{{Index: 0, Layer: -1, Label: fmt.Sprintf("%s", s.path), Demand: d}}, nil
}
