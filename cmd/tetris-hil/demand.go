package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

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
	fs            *pflag.FlagSet // to tell --matrix -1 given from the flag left out
}

func (s *demandSource) register(fs *pflag.FlagSet) {
	s.fs = fs
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
	if line, text, ok := csvHeader(s.path); ok && len(t.Matrices) == 1 {
		fmt.Fprintf(os.Stderr, "tetris-hil: %s: line %d (%s) is a header of names, not byte counts: skipped; the matrix is the %d×%d rows below it\n",
			s.path, line, text, len(t.Matrices[0].Bytes), len(t.Matrices[0].Bytes))
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
	// -1 is what the flags hold when left out (all matrices); given, it is no index.
	if s.matrix < -1 || s.matrix >= len(t.Matrices) || (s.matrix < 0 && s.given("matrix")) {
		return nil, usagef("--matrix %d: %s holds %d matrices (indices 0..%d; leave --matrix out for all)", s.matrix, name, len(t.Matrices), len(t.Matrices)-1)
	}
	if s.layer < -1 || (s.layer < 0 && s.given("layer")) {
		return nil, usagef("--layer %d: want a layer number ≥ 0 (leave --layer out for all)", s.layer)
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
		return nil, usagef("%s: no matrix of %s matches (it holds %s; see `tetris-hil trace show`)", s.selection(), name, holds(t))
	}
	return out, nil
}

func (s *demandSource) given(flag string) bool { return s.fs != nil && s.fs.Changed(flag) }

// selection is the selection flags as given, for a message ("--layer 3 --phase combine").
func (s *demandSource) selection() string {
	var parts []string
	if s.matrix >= 0 {
		parts = append(parts, fmt.Sprintf("--matrix %d", s.matrix))
	}
	if s.layer >= 0 {
		parts = append(parts, fmt.Sprintf("--layer %d", s.layer))
	}
	if s.phase != "" {
		parts = append(parts, "--phase "+s.phase)
	}
	return strings.Join(parts, " ")
}

// holds says which layers and phases a trace has: what a selection could have asked for.
func holds(t *trace.Trace) string {
	var layers, phases []string
	for _, m := range t.Matrices {
		if l := strconv.Itoa(m.Layer); !slices.Contains(layers, l) {
			layers = append(layers, l)
		}
		if p := string(m.Phase); !slices.Contains(phases, p) {
			phases = append(phases, p)
		}
	}
	n := fmt.Sprintf("%d matrices", len(t.Matrices))
	if len(t.Matrices) == 1 {
		n = "1 matrix"
	}
	return fmt.Sprintf("%s, layers %s, phases %s", n, strings.Join(layers, ", "), strings.Join(phases, ", "))
}

// csvHeader reports the header line of a CSV matrix file (its first line with content when no
// field of it is a number), which the reader skips: the run says so, so that a header a user
// meant as data is not dropped in silence.
func csvHeader(path string) (line int, text string, ok bool) {
	if !strings.EqualFold(filepath.Ext(path), ".csv") {
		return 0, "", false
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line++
		t := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			if _, err := strconv.ParseFloat(f, 64); err == nil {
				return 0, "", false
			}
		}
		if len(t) > 60 {
			t = t[:57] + "..."
		}
		return line, t, true
	}
	return 0, "", false
}
