package trace

import (
	"errors"
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// Version is the canonical trace format version this package reads and writes.
const Version = 1

// Phase is the All-to-All phase of an MoE layer a matrix was taken from.
type Phase string

const (
	// Dispatch sends each token's hidden state from its GPU to the GPUs of its chosen experts.
	Dispatch Phase = "dispatch"
	// Combine sends the expert outputs back: the transpose of dispatch.
	Combine Phase = "combine"
)

// ParsePhase accepts "dispatch" or "combine".
func ParsePhase(s string) (Phase, error) {
	switch Phase(s) {
	case Dispatch, Combine:
		return Phase(s), nil
	}
	return "", fmt.Errorf("unknown phase %q (want dispatch or combine)", s)
}

// Meta says what a trace was taken from. Zero fields are unknown and omitted from the file.
type Meta struct {
	Model         string `json:"model,omitempty"`
	GPUs          int    `json:"gpus"`
	HiddenSize    int    `json:"hidden_size,omitempty"`
	DtypeBytes    int    `json:"dtype_bytes,omitempty"`
	TokensPerGPU  int    `json:"tokens_per_gpu,omitempty"`
	TopK          int    `json:"top_k,omitempty"`
	Experts       int    `json:"experts,omitempty"`
	SharedExperts int    `json:"shared_experts,omitempty"`
	// DenseLayers are layers without experts: they have no All-to-All and so no matrices.
	DenseLayers []int `json:"dense_layers,omitempty"`
	// Placement names how experts were put on GPUs (contiguous, round-robin, a file name);
	// ExpertGPUs lists, for each expert, the GPU(s) holding it.
	Placement  string  `json:"placement,omitempty"`
	ExpertGPUs [][]int `json:"expert_gpus,omitempty"`
	Source     string  `json:"source,omitempty"`
	Provenance string  `json:"provenance,omitempty"`
	License    string  `json:"license,omitempty"`
	// Params records how the trace was made (generator flags, import options), as strings so
	// that the file is byte-identical on every platform.
	Params map[string]string `json:"params,omitempty"`
}

// Matrix is one demand matrix: Bytes[i][j] is what GPU i sends to GPU j in this phase.
type Matrix struct {
	Layer     int       `json:"layer"`
	Phase     Phase     `json:"phase"`
	Iteration *int      `json:"iteration,omitempty"`
	Dataset   string    `json:"dataset,omitempty"`
	Bytes     [][]int64 `json:"bytes"`
}

// Trace is a sequence of demand matrices over the same GPUs.
type Trace struct {
	Version  int      `json:"version"`
	Meta     Meta     `json:"meta"`
	Matrices []Matrix `json:"matrices"`
}

// N is the number of GPUs (ports).
func (t *Trace) N() int {
	if len(t.Matrices) > 0 {
		return len(t.Matrices[0].Bytes)
	}
	return t.Meta.GPUs
}

// Label names a matrix in reports: "layer 7 dispatch (arxiv)".
func (m *Matrix) Label() string {
	s := fmt.Sprintf("layer %d %s", m.Layer, m.Phase)
	if m.Iteration != nil {
		s += fmt.Sprintf(" iteration %d", *m.Iteration)
	}
	if m.Dataset != "" {
		s += " (" + m.Dataset + ")"
	}
	return s
}

// Demand returns the matrix as a schedules.Demand that shares its rows: reading a large trace
// then holds each matrix once, not once more per use. Nothing in the model changes a demand it
// is given; a caller that wants to must Clone it.
func (m *Matrix) Demand() *schedules.Demand {
	return &schedules.Demand{Bytes: m.Bytes}
}

// Transpose returns the combine matrix of a dispatch matrix (and vice versa).
func Transpose(b [][]int64) [][]int64 {
	n := len(b)
	t := newSquare(n)
	for i := range b {
		for j, v := range b[i] {
			t[j][i] = v
		}
	}
	return t
}

func newSquare(n int) [][]int64 {
	cells := make([]int64, n*n)
	b := make([][]int64, n)
	for i := range b {
		b[i] = cells[i*n : (i+1)*n : (i+1)*n]
	}
	return b
}

// ErrLimit is wrapped by errors about matrices above the port limit.
var ErrLimit = errors.New("above the port limit")

// Validate checks everything a reader promises: the version, square non-negative matrices of one
// size n with 0 < n ≤ maxPorts, known phases, non-negative layers, and metadata consistent with n.
// maxPorts ≤ 0 means schedules.DefaultMaxPorts. Errors name the field and the value.
func (t *Trace) Validate(maxPorts int) error {
	if maxPorts <= 0 {
		maxPorts = schedules.DefaultMaxPorts
	}
	if t.Version != Version {
		return fmt.Errorf("version %d is not supported (this build reads version %d)", t.Version, Version)
	}
	if len(t.Matrices) == 0 {
		return fmt.Errorf("matrices: the trace holds no matrices")
	}
	n := len(t.Matrices[0].Bytes)
	if err := checkN(n, maxPorts, "matrices[0].bytes"); err != nil {
		return err
	}
	if err := t.Meta.validate(n); err != nil {
		return err
	}
	for k := range t.Matrices {
		m := &t.Matrices[k]
		f := fmt.Sprintf("matrices[%d]", k)
		if _, err := ParsePhase(string(m.Phase)); err != nil {
			return fmt.Errorf("%s.phase: %w", f, err)
		}
		if m.Layer < 0 {
			return fmt.Errorf("%s.layer = %d is negative", f, m.Layer)
		}
		if m.Iteration != nil && *m.Iteration < 0 {
			return fmt.Errorf("%s.iteration = %d is negative", f, *m.Iteration)
		}
		if len(m.Bytes) != n {
			return fmt.Errorf("%s.bytes has %d rows, matrices[0] has %d (all matrices must be n×n with one n)", f, len(m.Bytes), n)
		}
		for i, row := range m.Bytes {
			if len(row) != n {
				return fmt.Errorf("%s.bytes[%d] has %d values, want %d (ragged or non-square matrix)", f, i, len(row), n)
			}
			for j, v := range row {
				if v < 0 {
					return fmt.Errorf("%s.bytes[%d][%d] = %d is negative", f, i, j, v)
				}
			}
		}
		if err := (&schedules.Demand{Bytes: m.Bytes}).CheckLimits(); err != nil {
			return fmt.Errorf("%s.bytes: %w", f, err)
		}
	}
	return nil
}

func checkN(n, maxPorts int, field string) error {
	if n == 0 {
		return fmt.Errorf("%s: empty matrix (n = 0)", field)
	}
	if n > maxPorts {
		return fmt.Errorf("%s: n = %d is %w of %d (raise it with --max-ports)", field, n, ErrLimit, maxPorts)
	}
	return nil
}

func (m *Meta) validate(n int) error {
	if m.GPUs != n {
		return fmt.Errorf("meta.gpus = %d but the matrices are %d×%d", m.GPUs, n, n)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"hidden_size", m.HiddenSize}, {"dtype_bytes", m.DtypeBytes}, {"tokens_per_gpu", m.TokensPerGPU},
		{"top_k", m.TopK}, {"experts", m.Experts}, {"shared_experts", m.SharedExperts}} {
		if f.v < 0 {
			return fmt.Errorf("meta.%s = %d is negative", f.name, f.v)
		}
	}
	if m.Experts > 0 && m.TopK > m.Experts {
		return fmt.Errorf("meta.top_k = %d is above meta.experts = %d", m.TopK, m.Experts)
	}
	for i, l := range m.DenseLayers {
		if l < 0 {
			return fmt.Errorf("meta.dense_layers[%d] = %d is negative", i, l)
		}
	}
	if len(m.ExpertGPUs) > 0 && m.Experts > 0 && len(m.ExpertGPUs) != m.Experts {
		return fmt.Errorf("meta.expert_gpus lists %d experts, meta.experts = %d", len(m.ExpertGPUs), m.Experts)
	}
	for e, gs := range m.ExpertGPUs {
		if len(gs) == 0 {
			return fmt.Errorf("meta.expert_gpus[%d] is empty: every expert needs a GPU", e)
		}
		for r, g := range gs {
			if g < 0 || g >= n {
				return fmt.Errorf("meta.expert_gpus[%d][%d] = %d is not a GPU in [0, %d)", e, r, g, n)
			}
		}
	}
	return nil
}
