package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// ExpertCounts is a file of measured per-expert routing totals: for each model, dataset and layer,
// how many (token, expert) routings each expert received (the format of
// shared/traces/expert-counts.json, derived from the allenai/OLMoE routing analysis).
type ExpertCounts struct {
	Version int                                      `json:"version"`
	Source  string                                   `json:"source"`
	HowMade string                                   `json:"how_made"`
	Models  map[string]CountsModel                   `json:"models"`
	Counts  map[string]map[string]map[string][]int64 `json:"counts"` // model → dataset → "layerN" → per expert
}

// CountsModel describes a model in an ExpertCounts file.
type CountsModel struct {
	HFName     string `json:"hf_name"`
	Experts    int    `json:"experts"`
	TopK       int    `json:"top_k"`
	HiddenSize int    `json:"hidden_size"`
	Layers     int    `json:"layers"`
}

// ReadExpertCounts reads and checks an expert-counts file: every count list has one
// non-negative entry per expert and every layer key is "layerN" with N below the model's layers.
func ReadExpertCounts(r io.Reader, name string) (*ExpertCounts, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c ExpertCounts
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("%s: version %d is not supported (want 1)", name, c.Version)
	}
	for model, byData := range c.Counts {
		cm, ok := c.Models[model]
		if !ok {
			return nil, fmt.Errorf("%s: counts.%s: model %q is not described under \"models\"", name, model, model)
		}
		if cm.Experts <= 0 || cm.TopK <= 0 || cm.TopK > cm.Experts || cm.HiddenSize <= 0 {
			return nil, fmt.Errorf("%s: models.%s: experts %d, top_k %d, hidden_size %d are not a valid MoE model", name, model, cm.Experts, cm.TopK, cm.HiddenSize)
		}
		for ds, byLayer := range byData {
			for key, counts := range byLayer {
				f := fmt.Sprintf("counts.%s.%s.%s", model, ds, key)
				l, err := layerOf(key)
				if err != nil || (cm.Layers > 0 && l >= cm.Layers) {
					return nil, fmt.Errorf("%s: %s: key %q is not \"layerN\" with N < %d", name, f, key, cm.Layers)
				}
				if len(counts) != cm.Experts {
					return nil, fmt.Errorf("%s: %s has %d counts, the model has %d experts", name, f, len(counts), cm.Experts)
				}
				for e, v := range counts {
					if v < 0 {
						return nil, fmt.Errorf("%s: %s[%d] = %d is negative", name, f, e, v)
					}
				}
			}
		}
	}
	return &c, nil
}

func layerOf(key string) (int, error) {
	s, ok := strings.CutPrefix(key, "layer")
	if !ok {
		return 0, fmt.Errorf("no layer prefix")
	}
	l, err := strconv.Atoi(s)
	if err != nil || l < 0 {
		return 0, fmt.Errorf("bad layer number %q", s)
	}
	return l, nil
}

// CountsConfig says how to turn per-expert totals into GPU-to-GPU matrices.
type CountsConfig struct {
	Model    string   // key in the file's "models"
	Datasets []string // nil: all, sorted
	GPUs     int
	// TokensPerGPU, when positive, scales each layer's totals (largest remainder, so they add up
	// exactly) to GPUs × TokensPerGPU × top-k routings: the receiver skew of the measurement at
	// the message sizes of a realistic batch. 0 keeps the measured totals.
	TokensPerGPU int
	DtypeBytes   int    // 0: 2 (bf16)
	Placement    string // "": contiguous
	Seed         uint64
	License      string // recorded in the trace metadata
}

// FromCounts spreads measured per-expert totals over source GPUs: each routing's source GPU is
// drawn uniformly (data parallelism: a token is equally likely to live on any GPU), which is a
// seeded multinomial split of every expert's count. A routing sends hidden × dtype bytes from
// its source to the GPU holding the expert; combine is the transpose. Matrices come per dataset
// (sorted), per layer (ascending), dispatch then combine.
func FromCounts(c *ExpertCounts, cfg CountsConfig) (*trace.Trace, error) {
	cm, ok := c.Models[cfg.Model]
	byData, ok2 := c.Counts[cfg.Model]
	if !ok || !ok2 {
		var ms []string
		for m := range c.Counts {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		return nil, fmt.Errorf("model %q has no counts (the file has %s)", cfg.Model, strings.Join(ms, ", "))
	}
	if cfg.GPUs < 1 || cfg.GPUs > MaxGPUs {
		return nil, fmt.Errorf("gpus = %d: want 1..%d", cfg.GPUs, MaxGPUs)
	}
	if cfg.TokensPerGPU < 0 || cfg.TokensPerGPU > MaxTokens {
		return nil, fmt.Errorf("tokens per GPU = %d: want 0..%d", cfg.TokensPerGPU, MaxTokens)
	}
	if cfg.DtypeBytes == 0 {
		cfg.DtypeBytes = 2
	}
	if cfg.Placement == "" {
		cfg.Placement = "contiguous"
	}
	place, err := trace.ParsePlacement(cfg.Placement, cm.Experts, cfg.GPUs)
	if err != nil {
		return nil, err
	}
	datasets := cfg.Datasets
	if datasets == nil {
		for ds := range byData {
			datasets = append(datasets, ds)
		}
		sort.Strings(datasets)
	}
	unit, ok := schedules.MulBytes(int64(cm.HiddenSize), int64(cfg.DtypeBytes))
	if !ok {
		unit = -1 // reported per layer below, with the counts
	}
	t := &trace.Trace{Version: trace.Version, Meta: trace.Meta{
		Model: cfg.Model, GPUs: cfg.GPUs, HiddenSize: cm.HiddenSize, DtypeBytes: cfg.DtypeBytes,
		TokensPerGPU: cfg.TokensPerGPU, TopK: cm.TopK, Experts: cm.Experts,
		Placement: place.Name, ExpertGPUs: place.ExpertGPUs,
		Source:     c.Source,
		Provenance: "per-expert routing totals (" + c.HowMade + "), spread over source GPUs by seeded uniform multinomial sampling (tetris-hil synth.FromCounts)",
		License:    cfg.License,
		Params: map[string]string{
			"model": cfg.Model, "hf_name": cm.HFName, "datasets": strings.Join(datasets, ","),
			"seed": strconv.FormatUint(cfg.Seed, 10), "tokens_per_gpu": strconv.Itoa(cfg.TokensPerGPU),
		},
	}}
	for di, ds := range datasets {
		byLayer, ok := byData[ds]
		if !ok {
			return nil, fmt.Errorf("model %q has no dataset %q", cfg.Model, ds)
		}
		type lc struct {
			layer  int
			counts []int64
		}
		var layers []lc
		for key, counts := range byLayer {
			l, err := layerOf(key)
			if err != nil {
				return nil, fmt.Errorf("counts.%s.%s: key %q: %w", cfg.Model, ds, key, err)
			}
			layers = append(layers, lc{l, counts})
		}
		sort.Slice(layers, func(a, b int) bool { return layers[a].layer < layers[b].layer })
		for _, x := range layers {
			counts := x.counts
			if cfg.TokensPerGPU > 0 {
				counts = ScaleCounts(counts, int64(cfg.GPUs)*int64(cfg.TokensPerGPU)*int64(cm.TopK))
			}
			var copies int64
			for _, c := range counts {
				copies += c
			}
			if _, ok := schedules.MulBytes(copies, unit); !ok || unit <= 0 {
				return nil, fmt.Errorf("counts.%s.%s: layer %d: %d token copies × hidden_size = %d × dtype bytes = %d is %w of %d bytes (2^53) per matrix that keeps sums exact",
					cfg.Model, ds, x.layer, copies, cm.HiddenSize, cfg.DtypeBytes, schedules.ErrLimit, schedules.MaxBytes)
			}
			r := newRNG(cfg.Seed, 3, uint64(di), uint64(x.layer))
			d := spread(counts, cfg.GPUs, &place, r, unit)
			t.Matrices = append(t.Matrices,
				trace.Matrix{Layer: x.layer, Phase: trace.Dispatch, Dataset: ds, Bytes: d},
				trace.Matrix{Layer: x.layer, Phase: trace.Combine, Dataset: ds, Bytes: trace.Transpose(d)})
		}
	}
	if len(t.Matrices) == 0 {
		return nil, fmt.Errorf("model %q: no counts selected", cfg.Model)
	}
	return t, t.Validate(MaxGPUs)
}

// ScaleCounts scales counts to add up to exactly total, in proportion, by the largest-remainder
// method (ties go to the lower expert id).
func ScaleCounts(counts []int64, total int64) []int64 {
	var sum int64
	for _, c := range counts {
		sum += c
	}
	out := make([]int64, len(counts))
	if sum == 0 {
		return out
	}
	rem := make([]int64, len(counts))
	var given int64
	for e, c := range counts {
		// c·total can exceed int64 only for absurd inputs; split it to stay exact.
		q, r := mulDiv(c, total, sum)
		out[e], rem[e] = q, r
		given += q
	}
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for i := 0; given < total; i++ {
		out[order[i]]++
		given++
	}
	return out
}

// mulDiv returns ⌊a·b/c⌋ and a·b mod c for non-negative a, b and positive c, without overflow.
func mulDiv(a, b, c int64) (int64, int64) {
	qa, ra := a/c, a%c
	// a·b = (qa·c + ra)·b = qa·b·c + ra·b
	q := qa * b
	hi, lo := mul64(uint64(ra), uint64(b))
	q2, r := div64(hi, lo, uint64(c))
	return q + int64(q2), int64(r)
}

// spread turns per-expert routing counts into a dispatch matrix: each routing gets a source GPU
// drawn uniformly and sends unit bytes to the GPU that the placement gives its expert.
func spread(counts []int64, gpus int, place *trace.Placement, r *rng, unit int64) [][]int64 {
	d := make([][]int64, gpus)
	for s := range d {
		d[s] = make([]int64, gpus)
	}
	for e, c := range counts {
		for range c {
			s := int(r.uintn(uint64(gpus)))
			d[s][place.GPU(e, s)] += unit
		}
	}
	return d
}
