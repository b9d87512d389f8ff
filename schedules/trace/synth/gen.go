package synth

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// Limits of the generator.
const (
	MaxGPUs   = 512
	MaxTokens = 1 << 20 // per GPU per layer
	MaxLayers = 1024
	MaxSkew   = 16
)

// Variation of expert popularity, in per mille: each layer scales each expert's Zipf weight by
// up to ±LayerJitter, and each source GPU scales that by up to ±SourceJitter (its own prompts).
const (
	LayerJitter  = 250
	SourceJitter = 100
)

// Config is one synthetic trace.
type Config struct {
	Model        Model
	GPUs         int
	TokensPerGPU int
	Layers       int // 0: the model's layer count
	Skew         float64
	Seed         uint64
	DtypeBytes   int    // 0: 2 (bf16)
	Placement    string // "": contiguous
	// ExpertPerGPU replaces the model's routed experts by one expert per GPU (GPUs experts, top-k
	// kept), so that every GPU sends to every other however many there are: the scaling setting of
	// Tetris Figure 9 (§4.2, 8 to 32 GPUs). Without it a model's 8 experts are replicated over
	// larger fabrics, each GPU talks to at most 8 others, and the maximum degree stays 7.
	ExpertPerGPU bool
}

// Generate makes a trace of MoE All-to-All traffic: for every MoE layer a dispatch matrix and its
// transpose, the combine matrix.
//
// Model of the traffic (Tetris §4.2: keep the skew and the layer-to-layer variation, use the
// model's hidden size): every GPU holds TokensPerGPU tokens (data parallel). Expert popularity
// is Zipf-like: the expert of rank r has weight (r+1)^-Skew. Each layer draws its own ranking
// (a seeded permutation) and scales each weight by a factor in 1 ± LayerJitter‰; each source GPU
// scales that again by 1 ± SourceJitter‰. Each token picks TopK distinct experts with probability
// proportional to weight (sampling without replacement, as a router's top-k does), and each
// (token, expert) routing sends Hidden × DtypeBytes bytes from the token's GPU to the GPU holding
// the expert. Dense layers and shared experts send nothing.
func Generate(c Config) (*trace.Trace, error) {
	if err := c.normalize(); err != nil {
		return nil, err
	}
	m := c.Model
	place, err := trace.ParsePlacement(c.Placement, m.Experts, c.GPUs)
	if err != nil {
		return nil, err
	}
	base := zipfWeights(m.Experts, c.Skew)
	// Each matrix carries GPUs × tokens × top-k copies of hidden × dtype bytes: bound it before
	// adding, so that no sum can wrap.
	unit, ok := schedules.MulBytes(int64(m.Hidden), int64(c.DtypeBytes))
	copies := int64(c.GPUs) * int64(c.TokensPerGPU) * int64(m.TopK)
	if _, ok2 := schedules.MulBytes(copies, unit); !ok || !ok2 {
		return nil, fmt.Errorf("hidden = %d × dtype bytes = %d × %d GPUs × %d tokens × top-%d is %w of %d bytes (2^53) per matrix that keeps sums exact",
			m.Hidden, c.DtypeBytes, c.GPUs, c.TokensPerGPU, m.TopK, schedules.ErrLimit, schedules.MaxBytes)
	}
	t := &trace.Trace{Version: trace.Version, Meta: c.meta(place)}
	for l := 0; l < c.Layers; l++ {
		if m.dense(l) {
			continue
		}
		layer := layerWeights(base, newRNG(c.Seed, 1, uint64(l)))
		d := make([][]int64, c.GPUs)
		for s := range d {
			d[s] = make([]int64, c.GPUs)
			r := newRNG(c.Seed, 2, uint64(l), uint64(s))
			cum := cumulative(layer, r)
			for range c.TokensPerGPU {
				for _, e := range pickDistinct(cum, m.TopK, r) {
					d[s][place.GPU(e, s)] += unit
				}
			}
		}
		t.Matrices = append(t.Matrices,
			trace.Matrix{Layer: l, Phase: trace.Dispatch, Bytes: d},
			trace.Matrix{Layer: l, Phase: trace.Combine, Bytes: trace.Transpose(d)})
	}
	if len(t.Matrices) == 0 {
		return nil, fmt.Errorf("model %s with %d layer(s) has only dense layers: no All-to-All traffic", m.Name, c.Layers)
	}
	return t, t.Validate(MaxGPUs)
}

func (c *Config) normalize() error {
	if c.ExpertPerGPU {
		if c.GPUs < 1 || c.GPUs > MaxGPUs {
			return fmt.Errorf("gpus = %d: want 1..%d", c.GPUs, MaxGPUs)
		}
		c.Model.Experts = c.GPUs
		if c.Model.TopK > c.GPUs {
			return fmt.Errorf("model %s: top-k %d with one expert per GPU needs at least %d GPUs, got %d", c.Model.Name, c.Model.TopK, c.Model.TopK, c.GPUs)
		}
	}
	if err := c.Model.check(); err != nil {
		return err
	}
	if c.Layers == 0 {
		c.Layers = c.Model.Layers
	}
	if c.DtypeBytes == 0 {
		c.DtypeBytes = 2
	}
	if c.Placement == "" {
		c.Placement = "contiguous"
	}
	switch {
	case c.GPUs < 1 || c.GPUs > MaxGPUs:
		return fmt.Errorf("gpus = %d: want 1..%d", c.GPUs, MaxGPUs)
	case c.TokensPerGPU < 1 || c.TokensPerGPU > MaxTokens:
		return fmt.Errorf("tokens per GPU = %d: want 1..%d", c.TokensPerGPU, MaxTokens)
	case c.Layers < 1 || c.Layers > MaxLayers:
		return fmt.Errorf("layers = %d: want 1..%d", c.Layers, MaxLayers)
	case math.IsNaN(c.Skew) || c.Skew < 0 || c.Skew > MaxSkew:
		return fmt.Errorf("skew = %v: want a Zipf exponent in [0, %d]", c.Skew, MaxSkew)
	case c.DtypeBytes < 1 || c.DtypeBytes > 8:
		return fmt.Errorf("dtype bytes = %d: want 1..8", c.DtypeBytes)
	}
	return nil
}

func (c *Config) meta(p trace.Placement) trace.Meta {
	m := c.Model
	var dense []int
	for _, l := range m.DenseLayers {
		if l < c.Layers {
			dense = append(dense, l)
		}
	}
	t := trace.Meta{
		Model: m.Name, GPUs: c.GPUs, HiddenSize: m.Hidden, DtypeBytes: c.DtypeBytes,
		TokensPerGPU: c.TokensPerGPU, TopK: m.TopK, Experts: m.Experts, SharedExperts: m.SharedExperts,
		DenseLayers: dense, Placement: p.Name, ExpertGPUs: p.ExpertGPUs,
		Source:     "synthetic: tetris-hil trace gen",
		Provenance: fmt.Sprintf("Zipf-like expert popularity (exponent %s), per-layer permutation and ±%d‰ jitter, per-source ±%d‰ jitter, top-%d without replacement", fmtFloat(c.Skew), LayerJitter, SourceJitter, m.TopK),
		Params: map[string]string{
			"model": m.Name, "hf_name": m.HFName, "gpus": strconv.Itoa(c.GPUs), "tokens_per_gpu": strconv.Itoa(c.TokensPerGPU),
			"layers": strconv.Itoa(c.Layers), "skew": fmtFloat(c.Skew), "seed": strconv.FormatUint(c.Seed, 10),
		},
	}
	if c.ExpertPerGPU {
		t.Params["expert_per_gpu"] = "true"
	}
	return t
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// weightScale is the fixed-point scale of popularity weights. Weights are rounded to it once,
// right after math.Pow, so that a last-bit difference in Pow between platforms cannot change
// any later (integer) step unless it crosses a rounding boundary 2^-20 wide.
const weightScale = 1 << 20

func zipfWeights(k int, s float64) []uint64 {
	w := make([]uint64, k)
	for r := range w {
		w[r] = max(1, uint64(math.Round(weightScale*math.Pow(float64(r+1), -s))))
	}
	return w
}

// layerWeights assigns the Zipf weights to experts by a seeded permutation and jitters them.
func layerWeights(base []uint64, r *rng) []uint64 {
	k := len(base)
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	for i := k - 1; i > 0; i-- {
		j := int(r.uintn(uint64(i + 1)))
		perm[i], perm[j] = perm[j], perm[i]
	}
	w := make([]uint64, k)
	for rank, e := range perm {
		w[e] = scale(base[rank], r.jitter(LayerJitter))
	}
	return w
}

func scale(w uint64, perMille int64) uint64 { return max(1, w*uint64(1000+perMille)/1000) }

// cumulative returns prefix sums of the weights after a per-source jitter.
func cumulative(w []uint64, r *rng) []uint64 {
	cum := make([]uint64, len(w))
	var s uint64
	for e, v := range w {
		s += scale(v, r.jitter(SourceJitter))
		cum[e] = s
	}
	return cum
}

// pickDistinct draws k distinct experts, each with probability proportional to its weight among
// those not yet drawn. It draws from all experts and redraws on a repeat, which has exactly that
// distribution; after many repeats in a row (k close to the number of experts under high skew)
// it draws from the remaining experts directly.
func pickDistinct(cum []uint64, k int, r *rng) []int {
	chosen := make([]int, 0, k)
	total := cum[len(cum)-1]
	for len(chosen) < k {
		e := -1
		for try := 0; try < 32 && e < 0; try++ {
			e = find(cum, r.uintn(total))
			if contains(chosen, e) {
				e = -1
			}
		}
		if e < 0 {
			e = pickRemaining(cum, chosen, r)
		}
		chosen = append(chosen, e)
	}
	return chosen
}

// find returns the expert whose cumulative interval holds x.
func find(cum []uint64, x uint64) int {
	lo, hi := 0, len(cum)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if cum[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func pickRemaining(cum []uint64, chosen []int, r *rng) int {
	weight := func(e int) uint64 {
		if contains(chosen, e) {
			return 0
		}
		if e == 0 {
			return cum[0]
		}
		return cum[e] - cum[e-1]
	}
	var total uint64
	for e := range cum {
		total += weight(e)
	}
	x := r.uintn(total)
	for e := range cum {
		if w := weight(e); x < w {
			return e
		} else {
			x -= w
		}
	}
	return len(cum) - 1 // unreachable: x < total
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
