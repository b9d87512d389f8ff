package trace

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

func routingOpts(onePerGPU bool) RoutingOptions {
	return RoutingOptions{GPUs: 2, Experts: 4, Hidden: 4, DtypeBytes: 2, Placement: Contiguous(4, 2), OnePerGPU: onePerGPU, Model: "toy"}
}

// testdata/routing/small.jsonl worked by hand. Experts 0, 1 live on GPU 0 and 2, 3 on GPU 1
// (contiguous); one routing is hidden × dtype = 4 × 2 = 8 bytes. Request "a" has 4 tokens at
// layer 0, so tokens 0, 1 are on GPU 0 and tokens 2, 3 on GPU 1 (lines are out of order;
// token_idx decides):
//
//	token 0 → experts 0, 2: GPU0→GPU0 8, GPU0→GPU1 8
//	token 1 → experts 2, 3: GPU0→GPU1 8 + 8
//	token 2 → experts 0, 1: GPU1→GPU0 8 + 8
//	token 3 → experts 3, 1: GPU1→GPU1 8, GPU1→GPU0 8
//
// Layer 1 has one token with source 1 choosing experts 0 and 1: GPU1→GPU0 16.
func TestImportRoutingHandComputed(t *testing.T) {
	for _, c := range []struct {
		onePerGPU bool
		layer0    [][]int64
		layer1    [][]int64
	}{
		{false, [][]int64{{8, 24}, {24, 8}}, [][]int64{{0, 0}, {16, 0}}},
		// One copy per destination GPU: tokens 1 and 2 send one copy, not two.
		{true, [][]int64{{8, 16}, {16, 8}}, [][]int64{{0, 0}, {8, 0}}},
	} {
		f, err := os.Open(filepath.Join("testdata", "routing", "small.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ImportRouting(f, "small.jsonl", routingOpts(c.onePerGPU))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := []Matrix{
			{Layer: 0, Phase: Dispatch, Bytes: c.layer0}, {Layer: 0, Phase: Combine, Bytes: Transpose(c.layer0)},
			{Layer: 1, Phase: Dispatch, Bytes: c.layer1}, {Layer: 1, Phase: Combine, Bytes: Transpose(c.layer1)},
		}
		if !reflect.DeepEqual(tr.Matrices, want) {
			t.Errorf("one copy per GPU %v: matrices %+v, want %+v", c.onePerGPU, tr.Matrices, want)
		}
		if tr.Meta.TopK != 2 || tr.Meta.TokensPerGPU != 0 { // layer 1 has tokens on GPU 1 only
			t.Errorf("top_k %d tokens_per_gpu %d, want 2 and 0", tr.Meta.TopK, tr.Meta.TokensPerGPU)
		}
		if !c.onePerGPU {
			b, _ := tr.Marshal()
			goldenfile.Check(t, "testdata/golden/"+"routing-small.json", b)
		}
	}
}

// Row sums (local traffic included) equal tokens on the GPU × top-k × hidden × dtype bytes.
func TestImportRoutingRowSums(t *testing.T) {
	const gpus, experts, topK, tokens, hidden, dtype = 4, 8, 2, 40, 16, 2
	var b strings.Builder
	for tok := 0; tok < tokens; tok++ {
		// Two distinct experts per token, varying with the token.
		e1, e2 := (tok*3)%experts, (tok*3+1+tok%5)%experts
		if e1 == e2 {
			e2 = (e2 + 1) % experts
		}
		b.WriteString(`{"layer": 5, "request": 7, "token_idx": ` + itoa(tok) + `, "experts": [` + itoa(e1) + `, ` + itoa(e2) + "]}\n")
	}
	o := RoutingOptions{GPUs: gpus, Experts: experts, Hidden: hidden, DtypeBytes: dtype, Placement: RoundRobin(experts, gpus)}
	tr, err := ImportRouting(strings.NewReader(b.String()), "gen.jsonl", o)
	if err != nil {
		t.Fatal(err)
	}
	d := tr.Matrices[0].Bytes
	for i, row := range d {
		var s int64
		for _, v := range row {
			s += v
		}
		if want := int64(tokens / gpus * topK * hidden * dtype); s != want {
			t.Errorf("row %d sums to %d, want %d tokens × %d × %d × %d = %d", i, s, tokens/gpus, topK, hidden, dtype, want)
		}
	}
	if tr.Meta.TokensPerGPU != tokens/gpus {
		t.Errorf("tokens_per_gpu = %d, want %d", tr.Meta.TokensPerGPU, tokens/gpus)
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

func TestReadRoutingRejects(t *testing.T) {
	ok := `{"layer": 0, "experts": [0, 1]}` + "\n"
	for _, c := range []struct {
		name, in, want string
	}{
		{"expert out of range", ok + `{"layer": 0, "experts": [0, 4]}`, `r.jsonl: line 2: field "experts" = 4 is out of range (expert ids are in [0, 4))`},
		{"negative expert", `{"layer": 0, "experts": [-1]}`, `line 1: field "experts" = -1 is negative`},
		{"fractional expert", `{"layer": 0, "experts": [1.5]}`, `line 1: field "experts" = 1.5 is not a whole number`},
		{"duplicate expert", `{"layer": 0, "experts": [1, 1]}`, `line 1: field "experts": expert 1 is chosen twice`},
		{"no experts", `{"layer": 0, "experts": []}`, `line 1: field "experts" is missing or empty`},
		{"missing layer", `{"experts": [1]}`, `line 1: field "layer" is missing`},
		{"negative layer", `{"layer": -2, "experts": [1]}`, `line 1: field "layer" = -2 is negative`},
		{"NaN layer", `{"layer": NaN, "experts": [1]}`, `line 1: malformed JSON`},
		{"source out of range", `{"layer": 0, "experts": [1], "source": 2}`, `line 1: field "source" = 2 is out of range (source ranks are in [0, 2))`},
		{"both request fields", `{"layer": 0, "experts": [1], "request": 1, "problem_id": 1}`, `line 1: fields "problem_id" and "request" are both present`},
		{"wrong type", `{"layer": 0, "experts": "1,2"}`, `line 1: field "experts": a JSON string where`},
		{"not an object", `[0, 1]`, `line 1: the line is a JSON array, not an object`},
		{"trailing garbage", ok + `{"layer": 0, "experts": [1]} x`, `line 2: trailing data after the JSON object`},
		{"two objects", `{"layer": 0, "experts": [1]}{"layer": 0, "experts": [1]}`, `line 1: trailing data after the JSON object`},
		{"truncated", ok + `{"layer": 0, "experts": [1`, `line 2: truncated JSON object`},
		{"empty", "\n\n", `r.jsonl: no routing records (empty file)`},
		{"duplicate token", `{"layer": 0, "token_idx": 4, "experts": [1]}` + "\n" + `{"layer": 0, "token_idx": 4, "experts": [2]}`,
			`r.jsonl: line 2: token_idx 4 of request (none) at layer 0 already appeared on line 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := routingOpts(false)
			_, err := ImportRouting(strings.NewReader(c.in), "r.jsonl", o)
			wantErr(t, err, c.want)
		})
	}
}

func TestImportRoutingBoundsMemory(t *testing.T) {
	var b strings.Builder
	for l := 0; l < 9; l++ {
		b.WriteString(`{"layer": ` + itoa(l) + `, "experts": [1]}` + "\n")
	}
	o := RoutingOptions{GPUs: 4096, Experts: 4, Hidden: 4, DtypeBytes: 2, Placement: Contiguous(4, 4096)}
	_, err := ImportRouting(strings.NewReader(b.String()), "many.jsonl", o)
	wantErr(t, err, "many.jsonl: line 9: layer 8 is the 9th distinct layer")
}

func TestImportRoutingRejectsOptions(t *testing.T) {
	o := routingOpts(false)
	o.Placement = Contiguous(3, 2)
	_, err := ImportRouting(strings.NewReader(`{"layer": 0, "experts": [1]}`), "r.jsonl", o)
	wantErr(t, err, `r.jsonl: placement "contiguous" places 3 experts, want 4`)
	o = routingOpts(false)
	o.GPUs, o.MaxPorts = 5, 4
	_, err = ImportRouting(strings.NewReader(`{"layer": 0, "experts": [1]}`), "r.jsonl", o)
	wantErr(t, err, "gpus = 5 is above the port limit of 4")
}

// The lines' dataset and model are kept: one shared dataset labels every matrix, one model
// names the trace's model where the options gave none; several datasets are listed.
func TestImportRoutingKeepsDatasetAndModel(t *testing.T) {
	for _, c := range []struct {
		name, lines, optModel  string
		dataset, model, listed string
	}{
		{"one dataset", `{"layer":0,"experts":[0],"dataset":"gsm8k","model":"mixtral-8x7b"}` + "\n" + `{"layer":0,"experts":[1],"dataset":"gsm8k","model":"mixtral-8x7b"}`, "", "gsm8k", "mixtral-8x7b", ""},
		{"option wins", `{"layer":0,"experts":[0],"model":"from-line"}`, "given", "", "given", ""},
		{"two datasets", `{"layer":0,"experts":[0],"dataset":"b"}` + "\n" + `{"layer":0,"experts":[1],"dataset":"a"}`, "", "", "", "a,b"},
		{"none", `{"layer":0,"experts":[0]}`, "", "", "", ""},
	} {
		o := routingOpts(false)
		o.Model = c.optModel
		tr, err := ImportRouting(strings.NewReader(c.lines), c.name, o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, m := range tr.Matrices {
			if m.Dataset != c.dataset {
				t.Errorf("%s: matrix dataset %q, want %q", c.name, m.Dataset, c.dataset)
			}
		}
		if tr.Meta.Model != c.model || tr.Meta.Params["datasets"] != c.listed {
			t.Errorf("%s: model %q datasets %q, want %q and %q", c.name, tr.Meta.Model, tr.Meta.Params["datasets"], c.model, c.listed)
		}
	}
}
