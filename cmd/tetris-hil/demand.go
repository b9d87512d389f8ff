package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// demandSource is the --demand family of flags that every command reading demand shares.
type demandSource struct {
	path          string
	matrix        int
	layer         int
	phase         string
	layout        string
	countDiagonal bool
	maxPorts      int
}

func (s *demandSource) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.path, "demand", "", "demand file: a trace (.json), a CSV matrix (.csv) or a NumPy array (.npy); default: the built-in Mixtral-8x7B trace (see 'tetris-hil trace show')")
	fs.IntVar(&s.matrix, "matrix", -1, "index of the one matrix to use (as 'tetris-hil trace show' lists them; default: all)")
	fs.IntVar(&s.layer, "layer", -1, "use only the matrices of this MoE layer (default: all)")
	fs.StringVar(&s.phase, "phase", "", "use only this All-to-All phase: dispatch or combine (default: both)")
	fs.StringVar(&s.layout, "layout", string(trace.LayoutLayers), "for .npy/CSV files without metadata: layers (matrix k = layer k dispatch) or pairs (dispatch, combine per layer)")
	fs.BoolVar(&s.countDiagonal, "count-diagonal", false, "schedule local (i→i) traffic through the fabric too (default: ignored, as on a GPU server)")
	fs.IntVar(&s.maxPorts, "max-ports", schedules.DefaultMaxPorts, "reject matrices larger than this")
	// -1 means "all": the usage says so in words, so --help must not also print "(default -1)";
	// pflag leaves out the default of an int flag whose DefValue reads "0" (help is its only use).
	fs.Lookup("matrix").DefValue = "0"
	fs.Lookup("layer").DefValue = "0"
}

// namedDemand is one matrix with where it came from, for reports.
type namedDemand struct {
	Index   int
	Layer   int
	Phase   string
	Label   string
	Dataset string // the trace's dataset (text domain or prompt set), when it names one
	Demand  *schedules.Demand
}

// matrix is the matrix as the experiment API takes it.
func (nd namedDemand) matrix() experiment.Matrix {
	return experiment.Matrix{Demand: nd.Demand,
		Ref: emulator.MatrixRef{Index: nd.Index, Layer: nd.Layer, Phase: nd.Phase, Dataset: nd.Dataset, Label: nd.Label}}
}

// loadTrace reads the --demand file, or the built-in trace when there is none.
func (s *demandSource) loadTrace(ctx context.Context) (*trace.Trace, string, error) {
	if s.maxPorts < 1 {
		return nil, "", usagef("--max-ports %d: want at least 1", s.maxPorts)
	}
	layout, err := trace.ParseLayout(s.layout)
	if err != nil {
		return nil, "", usagef("--layout: %v", err)
	}
	if s.path == "" {
		t, err := trace.Default()
		if err != nil {
			return nil, "", fmt.Errorf("built-in trace: %w", err)
		}
		return t, trace.DefaultName, nil
	}
	// Parsing a large file takes seconds: a signal ends the wait at once (the parse is
	// abandoned; nothing has been written yet).
	t, err := interruptible(ctx, func() (*trace.Trace, error) {
		return readTraceFile(s.path, trace.LoadOptions{MaxPorts: s.maxPorts, Layout: layout, Context: ctx})
	})
	if ctx.Err() != nil {
		return nil, "", context.Cause(ctx)
	}
	if err != nil {
		return nil, "", usagef("--demand: %v", err)
	}
	return t, s.path, nil
}

// readTraceFile loads a trace file of any readable format; a missing file names the path.
func readTraceFile(path string, o trace.LoadOptions) (*trace.Trace, error) {
	t, err := trace.Load(path, o)
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %v", path, pe.Err)
	}
	return t, err
}

// load returns the selected matrices.
func (s *demandSource) load(ctx context.Context) ([]namedDemand, error) {
	t, name, err := s.loadTrace(ctx)
	if err != nil {
		return nil, err
	}
	return s.selectFrom(t, name)
}

func (s *demandSource) selectFrom(t *trace.Trace, name string) ([]namedDemand, error) {
	var phase trace.Phase
	if s.phase != "" {
		p, err := trace.ParsePhase(s.phase)
		if err != nil {
			return nil, usagef("--phase: %v", err)
		}
		phase = p
	}
	if s.matrix < -1 || s.matrix >= len(t.Matrices) {
		return nil, usagef("--matrix %d: %s holds %d matrices (indices 0..%d)", s.matrix, name, len(t.Matrices), len(t.Matrices)-1)
	}
	if s.layer < -1 {
		return nil, usagef("--layer %d: want a layer number ≥ 0", s.layer)
	}
	var out []namedDemand
	for k := range t.Matrices {
		m := &t.Matrices[k]
		if (s.matrix >= 0 && k != s.matrix) || (s.layer >= 0 && m.Layer != s.layer) || (phase != "" && m.Phase != phase) {
			continue
		}
		d := m.Demand()
		d.CountDiagonal = s.countDiagonal
		out = append(out, namedDemand{Index: k, Layer: m.Layer, Phase: string(m.Phase), Dataset: m.Dataset,
			Label: fmt.Sprintf("%s #%d: %s", name, k, m.Label()), Demand: d})
	}
	if len(out) == 0 {
		return nil, usagef("--matrix %d --layer %d --phase %q: no matrix of %s matches (see `tetris-hil trace show`)", s.matrix, s.layer, s.phase, name)
	}
	return out, nil
}
