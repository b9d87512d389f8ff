package synth

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

func TestScaleCountsHandWorked(t *testing.T) {
	for _, c := range []struct {
		counts []int64
		total  int64
		want   []int64
	}{
		{[]int64{1, 1, 1}, 10, []int64{4, 3, 3}},  // 3⅓ each; the leftover goes to the lowest id
		{[]int64{5, 3}, 4, []int64{3, 1}},         // 2.5 and 1.5: a tie, lowest id wins
		{[]int64{6, 3, 1}, 20, []int64{12, 6, 2}}, // exact
		{[]int64{1, 0, 2}, 2, []int64{1, 0, 1}},   // ⅔ and 1⅓: remainders ⅔ vs ⅓
		{[]int64{0, 0}, 5, []int64{0, 0}},         // nothing to scale
		{[]int64{1 << 40, 1 << 40}, 1 << 41, []int64{1 << 40, 1 << 40}},
	} {
		if got := ScaleCounts(c.counts, c.total); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ScaleCounts(%v, %d) = %v, want %v", c.counts, c.total, got, c.want)
		}
	}
}

func TestScaleCountsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		counts := rapid.SliceOfN(rapid.Int64Range(0, 1<<40), 1, 70).Draw(t, "counts")
		total := rapid.Int64Range(0, 1<<40).Draw(t, "total")
		var sum int64
		for _, c := range counts {
			sum += c
		}
		got := ScaleCounts(counts, total)
		if sum == 0 {
			return
		}
		var gs int64
		for e, g := range got {
			gs += g
			// g is the exact quota rounded down or up.
			q, _ := mulDiv(counts[e], total, sum)
			if g != q && g != q+1 {
				t.Fatalf("expert %d: %d, quota floor %d", e, g, q)
			}
		}
		if gs != total {
			t.Fatalf("scaled counts sum to %d, want %d", gs, total)
		}
	})
}

const countsJSON = `{"version": 1, "source": "unit test", "how_made": "by hand",
 "models": {"toy": {"hf_name": "x/toy", "experts": 2, "top_k": 1, "hidden_size": 3, "layers": 4}},
 "counts": {"toy": {"d1": {"layer2": [3, 1], "layer0": [0, 5]}}}}`

// Receivers take exactly their experts' routings; every routing leaves some source GPU.
func TestFromCountsHandWorked(t *testing.T) {
	c, err := ReadExpertCounts(strings.NewReader(countsJSON), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := FromCounts(c, CountsConfig{Model: "toy", GPUs: 2, DtypeBytes: 2, Seed: 4, License: "CC0"})
	if err != nil {
		t.Fatal(err)
	}
	const unit = 3 * 2
	wantCols := map[int][]int64{0: {0, 5 * unit}, 2: {3 * unit, 1 * unit}}
	if len(tr.Matrices) != 4 || tr.Matrices[0].Layer != 0 || tr.Matrices[2].Layer != 2 {
		t.Fatalf("matrices %+v: want layers 0 and 2, dispatch and combine each", tr.Matrices)
	}
	for _, m := range tr.Matrices {
		if m.Dataset != "d1" {
			t.Errorf("dataset %q", m.Dataset)
		}
		if m.Phase != trace.Dispatch {
			continue
		}
		for j, want := range wantCols[m.Layer] {
			if got := m.Bytes[0][j] + m.Bytes[1][j]; got != want {
				t.Errorf("layer %d receiver %d: %d bytes, want %d", m.Layer, j, got, want)
			}
		}
	}
	if tr.Meta.License != "CC0" || tr.Meta.Source != "unit test" || tr.Meta.HiddenSize != 3 {
		t.Errorf("meta %+v", tr.Meta)
	}
	again, _ := FromCounts(c, CountsConfig{Model: "toy", GPUs: 2, DtypeBytes: 2, Seed: 4, License: "CC0"})
	if !reflect.DeepEqual(again, tr) {
		t.Error("same seed, different spreading")
	}
}

// Uniform sources: with many routings each source gets close to an equal share.
func TestSpreadIsUniformOverSources(t *testing.T) {
	place := trace.Contiguous(1, 4)
	d := spread([]int64{40000}, 4, &place, newRNG(11), 1)
	for s, row := range d {
		var sum int64
		for _, v := range row {
			sum += v
		}
		if sum < 9500 || sum > 10500 { // 10000 ± 5σ (σ ≈ 87)
			t.Errorf("source %d sent %d of 40000 routings, want about 10000", s, sum)
		}
	}
}

func TestReadExpertCountsRejects(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`[3, 1]`, `[3, 1, 4]`, "c.json: counts.toy.d1.layer2 has 3 counts, the model has 2 experts"},
		{`[3, 1]`, `[3, -1]`, "c.json: counts.toy.d1.layer2[1] = -1 is negative"},
		{`"layer2"`, `"layer9"`, `key "layer9" is not "layerN" with N < 4`},
		{`"layer2"`, `"l2"`, `key "l2" is not "layerN"`},
		{`"version": 1`, `"version": 3`, "version 3 is not supported"},
		{`"counts": {"toy"`, `"counts": {"big"`, `counts.big: model "big" is not described`},
		{`"top_k": 1`, `"top_k": 3`, "models.toy: experts 2, top_k 3"},
	} {
		_, err := ReadExpertCounts(strings.NewReader(strings.Replace(countsJSON, c.from, c.to, 1)), "c.json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
	c, _ := ReadExpertCounts(strings.NewReader(countsJSON), "c.json")
	if _, err := FromCounts(c, CountsConfig{Model: "nope", GPUs: 2}); err == nil || !strings.Contains(err.Error(), `model "nope" has no counts (the file has toy)`) {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := FromCounts(c, CountsConfig{Model: "toy", GPUs: 2, Datasets: []string{"d9"}}); err == nil || !strings.Contains(err.Error(), `no dataset "d9"`) {
		t.Errorf("unknown dataset: %v", err)
	}
}

func TestRealCountsAreTheSharedFile(t *testing.T) {
	c, err := RealCounts()
	if err != nil {
		t.Fatal(err)
	}
	// The arxiv layer-0 Mixtral counts of shared/traces/expert-counts.json, which add up to
	// 102 sequences × 2048 tokens × top-2.
	want := []int64{55713, 52019, 52619, 50522, 44401, 66285, 44770, 51463}
	got := c.Counts["mixtral-8x7b"]["arxiv"]["layer0"]
	var sum int64
	for _, v := range got {
		sum += v
	}
	if !reflect.DeepEqual(got, want) || sum != 102*2048*2 {
		t.Errorf("arxiv layer 0 = %v (sum %d), want %v (sum %d)", got, sum, want, 102*2048*2)
	}
	if len(c.Counts["olmoe-1b-7b"]["arxiv"]["layer0"]) != 64 {
		t.Error("OLMoE counts should have 64 experts")
	}
}
