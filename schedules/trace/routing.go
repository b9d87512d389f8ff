package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// RoutingOptions say how to turn token routings into GPU-to-GPU bytes.
type RoutingOptions struct {
	GPUs       int
	Experts    int
	Hidden     int // hidden size: elements per token
	DtypeBytes int // bytes per element (2 for bf16)
	Placement  Placement
	// OnePerGPU sends one copy of a token to a GPU that holds several of its chosen experts
	// (what a deduplicating All-to-All does); otherwise each (token, expert) routing is a copy.
	OnePerGPU bool
	MaxPorts  int
	Model     string
}

func (o *RoutingOptions) check() error {
	maxPorts := o.MaxPorts
	if maxPorts <= 0 {
		maxPorts = schedules.DefaultMaxPorts
	}
	switch {
	case o.GPUs <= 0:
		return fmt.Errorf("gpus = %d: want at least 1", o.GPUs)
	case o.GPUs > maxPorts:
		return fmt.Errorf("gpus = %d is %w of %d", o.GPUs, ErrLimit, maxPorts)
	case o.Experts <= 0:
		return fmt.Errorf("experts = %d: want at least 1", o.Experts)
	case o.Hidden <= 0:
		return fmt.Errorf("hidden = %d: want at least 1", o.Hidden)
	case o.DtypeBytes <= 0:
		return fmt.Errorf("dtype bytes = %d: want at least 1", o.DtypeBytes)
	case len(o.Placement.ExpertGPUs) != o.Experts:
		return fmt.Errorf("placement %q places %d experts, want %d", o.Placement.Name, len(o.Placement.ExpertGPUs), o.Experts)
	}
	for e, gs := range o.Placement.ExpertGPUs {
		if len(gs) == 0 {
			return fmt.Errorf("placement %q: expert %d has no GPU", o.Placement.Name, e)
		}
		for _, g := range gs {
			if g < 0 || g >= o.GPUs {
				return fmt.Errorf("placement %q: expert %d on GPU %d, not in [0, %d)", o.Placement.Name, e, g, o.GPUs)
			}
		}
	}
	return nil
}

// Routing is one token's routing decision at one layer, as a routing logger writes it.
type Routing struct {
	Layer   int
	Experts []int
	// Token orders tokens within a request; -1 if the line had no token_idx (line order then).
	Token   int64
	Request string // problem_id or request, as written (JSON text); "" if absent
	Source  int    // source rank; -1 if absent
	Line    int
}

type routingLine struct {
	Layer     *json.Number    `json:"layer"`
	Experts   []json.Number   `json:"experts"`
	TokenIdx  *json.Number    `json:"token_idx"`
	ProblemID json.RawMessage `json:"problem_id"`
	Request   json.RawMessage `json:"request"`
	Source    *json.Number    `json:"source"`
}

// ReadRouting reads token-routing JSONL: one JSON object per line with "layer" and "experts"
// (the chosen expert ids), and optional "token_idx", "problem_id" or "request", and "source"
// (the token's GPU). Other fields (router scores, text) are ignored. Blank lines are skipped.
// Errors name the line, the field and the value.
func ReadRouting(r io.Reader, name string, experts, gpus int) ([]Routing, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var out []Routing
	for line := 1; ; line++ {
		text, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		if len(bytes.TrimSpace(text)) > 0 {
			rt, perr := parseRouting(text, experts, gpus)
			if perr != nil {
				return nil, fmt.Errorf("%s: line %d: %w", name, line, perr)
			}
			rt.Line = line
			out = append(out, rt)
		}
		if err == io.EOF {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no routing records (empty file)", name)
	}
	return out, nil
}

func parseRouting(text []byte, experts, gpus int) (Routing, error) {
	rt := Routing{Token: -1, Source: -1}
	dec := json.NewDecoder(bytes.NewReader(text))
	var rl routingLine
	if err := dec.Decode(&rl); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return rt, fmt.Errorf("truncated JSON object")
		case errors.As(err, &te) && te.Field == "":
			return rt, fmt.Errorf("the line is a JSON %s, not an object", te.Value)
		case errors.As(err, &te):
			return rt, fmt.Errorf("field %q: a JSON %s where %s was expected", te.Field, te.Value, te.Type)
		}
		return rt, fmt.Errorf("malformed JSON: %v", err)
	}
	if dec.More() {
		return rt, fmt.Errorf("trailing data after the JSON object at column %d", dec.InputOffset()+1)
	}
	if _, err := dec.Token(); err != io.EOF {
		return rt, fmt.Errorf("trailing data after the JSON object at column %d", dec.InputOffset()+1)
	}
	if rl.Layer == nil {
		return rt, fmt.Errorf("field \"layer\" is missing")
	}
	l, err := nonNegInt(*rl.Layer, "layer", 1<<31-1)
	if err != nil {
		return rt, err
	}
	rt.Layer = int(l)
	if len(rl.Experts) == 0 {
		return rt, fmt.Errorf("field \"experts\" is missing or empty: every token picks at least one expert")
	}
	rt.Experts = make([]int, len(rl.Experts))
	for i, s := range rl.Experts {
		e, err := nonNegInt(s, "experts", int64(experts)-1)
		if err != nil {
			return rt, fmt.Errorf("%w (expert ids are in [0, %d))", err, experts)
		}
		for _, prev := range rt.Experts[:i] {
			if prev == int(e) {
				return rt, fmt.Errorf("field \"experts\": expert %d is chosen twice", e)
			}
		}
		rt.Experts[i] = int(e)
	}
	if rl.TokenIdx != nil {
		if rt.Token, err = nonNegInt(*rl.TokenIdx, "token_idx", 1<<62); err != nil {
			return rt, err
		}
	}
	if rl.Source != nil {
		s, err := nonNegInt(*rl.Source, "source", int64(gpus)-1)
		if err != nil {
			return rt, fmt.Errorf("%w (source ranks are in [0, %d))", err, gpus)
		}
		rt.Source = int(s)
	}
	switch {
	case len(rl.ProblemID) > 0 && len(rl.Request) > 0:
		return rt, fmt.Errorf("fields \"problem_id\" and \"request\" are both present; give one")
	case len(rl.ProblemID) > 0:
		rt.Request = string(rl.ProblemID)
	case len(rl.Request) > 0:
		rt.Request = string(rl.Request)
	}
	return rt, nil
}

func nonNegInt(s json.Number, field string, maxV int64) (int64, error) {
	v, err := strconv.ParseInt(string(s), 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("field %q = %s is not a whole number", field, s)
	case v < 0:
		return 0, fmt.Errorf("field %q = %d is negative", field, v)
	case v > maxV:
		return 0, fmt.Errorf("field %q = %d is out of range", field, v)
	}
	return v, nil
}

// ImportRouting reads token-routing JSONL and returns a trace with, per layer, the dispatch
// matrix and its transpose, the combine matrix. A token's GPU is its "source" if given; else the
// tokens of each request (in token_idx order, or line order) are split contiguously over the
// GPUs: rank r of T goes to GPU ⌊r·G/T⌋. Each (token, expert) routing sends hidden × dtype bytes
// from the token's GPU to the expert's GPU (see RoutingOptions.OnePerGPU).
func ImportRouting(r io.Reader, name string, o RoutingOptions) (*Trace, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rs, err := ReadRouting(r, name, o.Experts, o.GPUs)
	if err != nil {
		return nil, err
	}
	return buildRouting(rs, name, o)
}

// maxRoutingCells bounds the dispatch matrices of one import (1 GiB of int64s): 128 layers at
// 1024 GPUs, or 8 at 4096.
const maxRoutingCells = 1 << 27

func buildRouting(rs []Routing, name string, o RoutingOptions) (*Trace, error) {
	type key struct {
		layer   int
		request string
	}
	groups := map[key][]int{} // indices into rs of tokens without a source
	dispatch := map[int][][]int64{}
	tokens := map[int][]int64{} // per layer, tokens per GPU
	topK := 0
	unit, ok := schedules.MulBytes(int64(o.Hidden), int64(o.DtypeBytes))
	if !ok {
		return nil, fmt.Errorf("hidden = %d × dtype bytes = %d per token copy is %w of %d bytes (2^53) that keeps sums exact",
			o.Hidden, o.DtypeBytes, schedules.ErrLimit, schedules.MaxBytes)
	}
	// Every (token, expert) routing adds one unit: bound the whole import's bytes before adding.
	var copies int64
	for i := range rs {
		copies += int64(len(rs[i].Experts))
	}
	if _, ok := schedules.MulBytes(copies, unit); !ok {
		return nil, fmt.Errorf("%s: %d token copies × %d bytes (hidden = %d × dtype bytes = %d) is %w of %d bytes (2^53) that keeps sums exact",
			name, copies, unit, o.Hidden, o.DtypeBytes, schedules.ErrLimit, schedules.MaxBytes)
	}
	src := make([]int, len(rs))
	for i := range rs {
		topK = max(topK, len(rs[i].Experts))
		if _, ok := dispatch[rs[i].Layer]; !ok {
			// Each layer costs a G×G matrix: bound the memory a small file can ask for.
			if cells := int64(len(dispatch)+1) * int64(o.GPUs) * int64(o.GPUs); cells > maxRoutingCells {
				return nil, fmt.Errorf("%s: line %d: layer %d is the %dth distinct layer; %d layers of %d×%d matrices are more than this importer holds (%d cells)",
					name, rs[i].Line, rs[i].Layer, len(dispatch)+1, len(dispatch)+1, o.GPUs, o.GPUs, maxRoutingCells)
			}
			dispatch[rs[i].Layer] = newSquare(o.GPUs)
			tokens[rs[i].Layer] = make([]int64, o.GPUs)
		}
		src[i] = rs[i].Source
		if rs[i].Source < 0 {
			k := key{rs[i].Layer, rs[i].Request}
			groups[k] = append(groups[k], i)
		}
	}
	for k, idx := range groups {
		sort.SliceStable(idx, func(a, b int) bool { return rs[idx[a]].Token < rs[idx[b]].Token })
		for a := 1; a < len(idx); a++ {
			if t := rs[idx[a]].Token; t >= 0 && t == rs[idx[a-1]].Token {
				return nil, fmt.Errorf("%s: line %d: token_idx %d of request %s at layer %d already appeared on line %d",
					name, rs[idx[a]].Line, t, orNone(k.request), k.layer, rs[idx[a-1]].Line)
			}
		}
		for rank, i := range idx {
			src[i] = int(int64(rank) * int64(o.GPUs) / int64(len(idx)))
		}
	}
	for i := range rs {
		d := dispatch[rs[i].Layer]
		s := src[i]
		tokens[rs[i].Layer][s]++
		var seen map[int]bool
		if o.OnePerGPU {
			seen = map[int]bool{}
		}
		for _, e := range rs[i].Experts {
			g := o.Placement.GPU(e, s)
			if seen != nil {
				if seen[g] {
					continue
				}
				seen[g] = true
			}
			d[s][g] += unit
		}
	}
	layers := make([]int, 0, len(dispatch))
	for l := range dispatch {
		layers = append(layers, l)
	}
	sort.Ints(layers)
	t := &Trace{Version: Version, Meta: Meta{
		Model: o.Model, GPUs: o.GPUs, HiddenSize: o.Hidden, DtypeBytes: o.DtypeBytes, TopK: topK,
		Experts: o.Experts, Placement: o.Placement.Name, ExpertGPUs: o.Placement.ExpertGPUs,
		Source: name, Provenance: "tetris-hil trace import --format routing-jsonl",
		Params: map[string]string{"one_copy_per_gpu": strconv.FormatBool(o.OnePerGPU), "records": strconv.Itoa(len(rs))},
	}}
	// tokens_per_gpu is only meaningful when every GPU had the same number at every layer.
	same := true
	first := tokens[layers[0]][0]
	for _, l := range layers {
		for _, c := range tokens[l] {
			same = same && c == first
		}
	}
	if same {
		t.Meta.TokensPerGPU = int(first)
	}
	for _, l := range layers {
		t.Matrices = append(t.Matrices,
			Matrix{Layer: l, Phase: Dispatch, Bytes: dispatch[l]},
			Matrix{Layer: l, Phase: Combine, Bytes: Transpose(dispatch[l])})
	}
	return t, t.Validate(o.MaxPorts)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
