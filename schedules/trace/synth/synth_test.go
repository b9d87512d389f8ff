package synth

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

func gen(t *testing.T, model string, gpus, tokens, layers int, skew float64, seed uint64) *trace.Trace {
	t.Helper()
	m, err := LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Generate(Config{Model: m, GPUs: gpus, TokensPerGPU: tokens, Layers: layers, Skew: skew, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The same seed gives the same bytes, here and on every platform: the golden files were made
// on linux/amd64 and the generator uses integer arithmetic after one rounding of math.Pow.
func TestGenerateGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		tr   func() *trace.Trace
	}{
		{"gen-mixtral-8x22b.json", func() *trace.Trace { return gen(t, "mixtral-8x22b", 8, 64, 3, 1.2, 42) }},
		{"gen-deepseek-moe-16b.json", func() *trace.Trace { return gen(t, "deepseek-moe-16b", 4, 16, 2, 1, 7) }},
	} {
		b, err := c.tr().Marshal()
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, "testdata/"+c.file, b)
		again, _ := c.tr().Marshal()
		if !bytes.Equal(b, again) {
			t.Errorf("%s: two runs with the same seed differ", c.file)
		}
	}
	a, _ := gen(t, "mixtral-8x7b", 8, 64, 2, 1, 1).Marshal()
	b, _ := gen(t, "mixtral-8x7b", 8, 64, 2, 1, 2).Marshal()
	if bytes.Equal(a, b) {
		t.Error("seeds 1 and 2 gave the same trace")
	}
}

// Every token sends top-k routings of hidden × dtype bytes from its GPU (data parallel), so each
// dispatch row, local traffic included, sums to tokens × top-k × hidden × dtype; combine is the
// transpose.
func TestGenerateRowSums(t *testing.T) {
	for _, c := range []struct {
		model        string
		gpus, tokens int
	}{{"mixtral-8x7b", 8, 100}, {"mixtral-8x22b", 16, 50}, {"deepseek-moe-16b", 8, 30}, {"deepseek-moe-16b", 128, 5}} {
		tr := gen(t, c.model, c.gpus, c.tokens, 3, 1, 3)
		m := Presets[c.model]
		want := int64(c.tokens * m.TopK * m.Hidden * 2)
		for k := 0; k < len(tr.Matrices); k += 2 {
			d, cm := tr.Matrices[k], tr.Matrices[k+1]
			if d.Phase != trace.Dispatch || cm.Phase != trace.Combine || d.Layer != cm.Layer {
				t.Fatalf("%s: matrices %d, %d are %s, %s", c.model, k, k+1, d.Label(), cm.Label())
			}
			if !reflect.DeepEqual(cm.Bytes, trace.Transpose(d.Bytes)) {
				t.Errorf("%s %s: combine is not the transpose of dispatch", c.model, d.Label())
			}
			for i, row := range d.Bytes {
				var s int64
				for _, v := range row {
					s += v
				}
				if s != want {
					t.Errorf("%s %s: row %d sums to %d, want %d", c.model, d.Label(), i, s, want)
				}
			}
		}
	}
}

func TestGenerateDenseLayerAndShared(t *testing.T) {
	tr := gen(t, "deepseek-moe-16b", 8, 4, 3, 1, 1)
	var layers []int
	for _, m := range tr.Matrices {
		layers = append(layers, m.Layer)
	}
	if want := []int{1, 1, 2, 2}; !reflect.DeepEqual(layers, want) {
		t.Errorf("layers %v, want %v: layer 0 is dense and has no All-to-All", layers, want)
	}
	if !reflect.DeepEqual(tr.Meta.DenseLayers, []int{0}) || tr.Meta.SharedExperts != 2 || tr.Meta.Experts != 64 || tr.Meta.TopK != 6 {
		t.Errorf("meta %+v", tr.Meta)
	}
	m, _ := LookupModel("deepseek-moe-16b")
	if _, err := Generate(Config{Model: m, GPUs: 8, TokensPerGPU: 4, Layers: 1, Skew: 1}); err == nil || !strings.Contains(err.Error(), "only dense layers") {
		t.Errorf("one dense layer: error %v", err)
	}
}

// Skew makes a few receivers hot (Tetris Figure 3); skew 0 is uniform popularity, up to the
// jitter. Hot receivers move between layers.
func TestGenerateSkew(t *testing.T) {
	maxMean := func(tr *trace.Trace) (lo, hi float64, hot map[int]bool) {
		lo, hot = 1e9, map[int]bool{}
		for _, s := range tr.Summarize(1, 0) {
			if tr.Matrices[s.Index].Phase != trace.Dispatch {
				continue
			}
			r := s.Stats.ReceiverSkew
			lo, hi = min(lo, r), max(hi, r)
			for _, e := range s.Stats.Bottlenecks {
				hot[e.Port] = true
			}
		}
		return lo, hi, hot
	}
	_, hi0, _ := maxMean(gen(t, "mixtral-8x22b", 8, 2048, 8, 0, 5))
	lo1, _, hot := maxMean(gen(t, "mixtral-8x22b", 8, 2048, 8, 1, 5))
	if hi0 > 1.35 {
		t.Errorf("skew 0: receiver max/mean up to %.3f, want near 1", hi0)
	}
	if lo1 < 1.8 {
		t.Errorf("skew 1: receiver max/mean down to %.3f, want hot receivers (> 1.8)", lo1)
	}
	if len(hot) < 3 {
		t.Errorf("skew 1: bottleneck receivers over 8 layers are %v; the hot experts should move between layers", hot)
	}
}

func TestGenerateRejects(t *testing.T) {
	m := Presets["mixtral-8x7b"]
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Model: m, GPUs: 0, TokensPerGPU: 1, Skew: 1}, "gpus = 0: want 1..512"},
		{Config{Model: m, GPUs: 513, TokensPerGPU: 1, Skew: 1}, "gpus = 513"},
		{Config{Model: m, GPUs: 8, TokensPerGPU: 0, Skew: 1}, "tokens per GPU = 0"},
		{Config{Model: m, GPUs: 8, TokensPerGPU: 1, Skew: -1}, "skew = -1"},
		{Config{Model: m, GPUs: 8, TokensPerGPU: 1, Skew: 1, Placement: "random"}, `unknown placement "random"`},
		{Config{Model: Model{Name: "x", Hidden: 8, Experts: 4, TopK: 5, Layers: 1}, GPUs: 8, TokensPerGPU: 1}, "top-k 5: want 1..4"},
	} {
		_, err := Generate(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%+v): error %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := LookupModel("gpt-5"); err == nil || !strings.Contains(err.Error(), "deepseek-moe-16b, mixtral-8x22b, mixtral-8x7b") {
		t.Errorf("LookupModel: %v", err)
	}
}

func TestZipfWeights(t *testing.T) {
	// 2^20 / r for r = 1..4, rounded.
	if got, want := zipfWeights(4, 1), []uint64{1048576, 524288, 349525, 262144}; !reflect.DeepEqual(got, want) {
		t.Errorf("zipfWeights(4, 1) = %v, want %v", got, want)
	}
	if got := zipfWeights(3, 0); !reflect.DeepEqual(got, []uint64{1 << 20, 1 << 20, 1 << 20}) {
		t.Errorf("zipfWeights(3, 0) = %v, want uniform", got)
	}
}

// SplitMix64 seeded with 0 starts 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4 (the reference sequence).
func TestSplitMix64Reference(t *testing.T) {
	r := newRNG(0)
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := r.next(); got != want {
			t.Errorf("output %d = %#x, want %#x", i, got, want)
		}
	}
}

func TestPickDistinctProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := rapid.IntRange(1, 70).Draw(t, "experts")
		k := rapid.IntRange(1, e).Draw(t, "k")
		ws := rapid.SliceOfN(rapid.Uint64Range(1, 1<<30), e, e).Draw(t, "weights")
		cum := make([]uint64, e)
		var s uint64
		for i, w := range ws {
			s += w
			cum[i] = s
		}
		r := newRNG(rapid.Uint64().Draw(t, "seed"))
		got := pickDistinct(cum, k, r)
		seen := map[int]bool{}
		for _, x := range got {
			if x < 0 || x >= e || seen[x] {
				t.Fatalf("pickDistinct gave %v: out of range or repeated", got)
			}
			seen[x] = true
		}
		if len(got) != k {
			t.Fatalf("got %d experts, want %d", len(got), k)
		}
		n := rapid.Uint64Range(1, 1<<40).Draw(t, "n")
		if v := r.uintn(n); v >= n {
			t.Fatalf("uintn(%d) = %d", n, v)
		}
	})
}

// With one expert holding nearly all the weight, it is almost always drawn first; drawing all
// experts exercises the fallback after repeated rejections and still gives a permutation.
func TestPickDistinctFollowsWeights(t *testing.T) {
	cum := []uint64{1, 2, 1<<40 + 2, 1<<40 + 3}
	r := newRNG(9)
	first := 0
	for i := 0; i < 1000; i++ {
		p := pickDistinct(cum, 4, r)
		if p[0] == 2 {
			first++
		}
		seen := map[int]bool{}
		for _, e := range p {
			seen[e] = true
		}
		if len(seen) != 4 {
			t.Fatalf("not a permutation: %v", p)
		}
	}
	if first < 999 {
		t.Errorf("heavy expert drawn first %d of 1000 times", first)
	}
}

// TestExpertPerGPU: with one expert per GPU every GPU sends to every other (maximum degree n − 1
// as n grows), where the preset's 8 experts replicated over 16 or 32 GPUs keep it at 7; the row
// sums are still tokens × top-k × hidden × dtype, and the metadata says how many experts there
// were.
func TestExpertPerGPU(t *testing.T) {
	m, _ := LookupModel("mixtral-8x22b")
	for _, n := range []int{8, 16, 32} {
		for _, spread := range []bool{false, true} {
			tr, err := Generate(Config{Model: m, GPUs: n, TokensPerGPU: 600, Layers: 2, Skew: 1, Seed: 3, ExpertPerGPU: spread})
			if err != nil {
				t.Fatal(err)
			}
			want := 7
			if spread {
				want = n - 1
			}
			for _, mx := range tr.Matrices {
				d := mx.Demand()
				if got := d.MaxDegree(); got != want {
					t.Errorf("n=%d, expert per GPU %v, %s: maximum degree %d, want %d", n, spread, mx.Label(), got, want)
				}
				if mx.Phase != trace.Dispatch {
					continue
				}
				for s, row := range mx.Bytes {
					var sum int64
					for _, v := range row {
						sum += v
					}
					if sum != 600*2*6144*2 {
						t.Errorf("n=%d: row %d sums to %d", n, s, sum)
					}
				}
			}
			if spread && (tr.Meta.Experts != n || tr.Meta.Params["expert_per_gpu"] != "true") {
				t.Errorf("n=%d: meta experts %d, params %v", n, tr.Meta.Experts, tr.Meta.Params)
			}
		}
	}
	if _, err := Generate(Config{Model: m, GPUs: 1, TokensPerGPU: 1, Skew: 1, ExpertPerGPU: true}); err == nil {
		t.Error("top-2 with one expert on one GPU accepted")
	}
}
