package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, code, err := cli(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %v\n%s", args, code, err, out)
	}
	return out
}

func loadTrace(t *testing.T, path string) *trace.Trace {
	t.Helper()
	tr, err := trace.Load(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// gen → export .npy → import (pairs) and gen → export CSV → import give back the same matrices.
func TestTraceGenExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustCLI(t, "trace", "gen", "--model", "mixtral-8x22b", "--gpus", "8", "--tokens-per-gpu", "64", "--layers", "3", "--seed", "9", "-o", p("g.json"))
	orig := loadTrace(t, p("g.json"))
	if len(orig.Matrices) != 6 {
		t.Fatalf("%d matrices, want 3 layers × 2 phases", len(orig.Matrices))
	}
	mustCLI(t, "trace", "export", p("g.json"), "-o", p("g.npy"))
	mustCLI(t, "trace", "import", "--layout", "pairs", p("g.npy"), "-o", p("n.json"))
	back := loadTrace(t, p("n.json"))
	for k := range orig.Matrices {
		o, b := orig.Matrices[k], back.Matrices[k]
		if o.Layer != b.Layer || o.Phase != b.Phase || !reflect.DeepEqual(o.Bytes, b.Bytes) {
			t.Errorf(".npy round trip, matrix %d: %s vs %s", k, b.Label(), o.Label())
		}
	}
	mustCLI(t, "trace", "export", p("g.json"), "--matrix", "3", "-o", p("m3.csv"))
	mustCLI(t, "trace", "import", p("m3.csv"), "-o", p("c.json"))
	if c := loadTrace(t, p("c.json")); !reflect.DeepEqual(c.Matrices[0].Bytes, orig.Matrices[3].Bytes) {
		t.Error("CSV round trip changed matrix 3")
	}
	// A CSV without the extension, with the format forced.
	os.Rename(p("m3.csv"), p("m3.dat"))
	mustCLI(t, "trace", "import", "--format", "csv", "--model", "mixtral-8x22b", p("m3.dat"), "-o", p("d.json"))
	if d := loadTrace(t, p("d.json")); !reflect.DeepEqual(d.Matrices[0].Bytes, orig.Matrices[3].Bytes) || d.Meta.Source != p("m3.dat") || d.Meta.Model != "mixtral-8x22b" {
		t.Errorf("--format csv: source %q model %q", d.Meta.Source, d.Meta.Model)
	}
	mustCLI(t, "trace", "export", p("g.json"), "--layer", "1", "-o", p("l1.json"))
	if l1 := loadTrace(t, p("l1.json")); len(l1.Matrices) != 2 || l1.Matrices[0].Layer != 1 || !reflect.DeepEqual(l1.Meta, orig.Meta) {
		t.Errorf("export --layer 1 gave %d matrices", len(l1.Matrices))
	}
	// Same seed, same file.
	mustCLI(t, "trace", "gen", "--model", "mixtral-8x22b", "--gpus", "8", "--tokens-per-gpu", "64", "--layers", "3", "--seed", "9", "-o", p("g2.json"))
	a, _ := os.ReadFile(p("g.json"))
	b, _ := os.ReadFile(p("g2.json"))
	if !bytes.Equal(a, b) {
		t.Error("trace gen with the same seed wrote different files")
	}
}

func TestTraceImportRouting(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	mustCLI(t, "trace", "import", "--format", "routing-jsonl", "--gpus", "2", "--experts", "4", "--hidden", "4", "--dtype-bytes", "2",
		"../../schedules/trace/testdata/routing/small.jsonl", "-o", out)
	tr := loadTrace(t, out)
	// The hand-worked matrix of schedules/trace TestImportRoutingHandComputed.
	if want := [][]int64{{8, 24}, {24, 8}}; !reflect.DeepEqual(tr.Matrices[0].Bytes, want) {
		t.Errorf("layer 0 dispatch %v, want %v", tr.Matrices[0].Bytes, want)
	}
	mustCLI(t, "trace", "import", "--format", "routing-jsonl", "--gpus", "2", "--experts", "4", "--hidden", "4", "--one-copy-per-gpu",
		"../../schedules/trace/testdata/routing/small.jsonl", "-o", out)
	if want := [][]int64{{8, 16}, {16, 8}}; !reflect.DeepEqual(loadTrace(t, out).Matrices[0].Bytes, want) {
		t.Errorf("one copy per GPU: %v, want %v", loadTrace(t, out).Matrices[0].Bytes, want)
	}
}

func TestTraceImportExpertCounts(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.json")
	mustCLI(t, "trace", "import", "--format", "expert-counts", "--model", "olmoe-1b-7b", "--datasets", "arxiv", "--gpus", "8", "builtin", "-o", out)
	tr := loadTrace(t, out)
	if tr.N() != 8 || len(tr.Matrices) != 6 || tr.Meta.Experts != 64 || !strings.Contains(tr.Meta.License, "Apache-2.0") {
		t.Errorf("n %d, %d matrices, %d experts, licence %q", tr.N(), len(tr.Matrices), tr.Meta.Experts, tr.Meta.License)
	}
}

func TestTraceShow(t *testing.T) {
	png := filepath.Join(t.TempDir(), "h.png")
	out := mustCLI(t, "trace", "show", "--matrix", "0", "--heatmap", png, "--bandwidth", "800Gbps", "--reconfig", "10us")
	for _, want := range []string{
		"trace built-in Mixtral-8x7B trace: n = 8 GPUs, 30 matrices (1 selected)",
		"licence: Apache-2.0", "bounds at 800Gbps per port, α_r = 10µs", "Rx5", "heatmap of #0 written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("heatmap: %v", err)
	}
	out = mustCLI(t, "trace", "show", "../../schedules/trace/testdata/golden/small.json", "--bandwidth", "8B/s", "--reconfig", "1s")
	// Matrix 0 is [[0,10,20],[5,0,0],[7,1,0]]: Tx0 sends 30 B → 3.75 s at 8 B/s, + 2 s for its 2
	// partners (each waits for one switch change, the first included).
	for _, want := range []string{"n = 3 GPUs, 2 matrices", "Tx0", "3.75s", "5.75s", "total over the fabric: 86B"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDemandSourceSelects(t *testing.T) {
	for _, c := range []struct {
		args []string
		n    int
	}{
		{nil, 30},
		{[]string{"--layer", "7", "--phase", "dispatch"}, 5},
		{[]string{"--matrix", "3"}, 1},
		{[]string{"--phase", "combine"}, 15},
		{[]string{"--demand", "../../schedules/trace/testdata/npy/pair_i8_3d.npy", "--layout", "pairs", "--phase", "combine"}, 1},
	} {
		var s demandSource
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		s.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		ds, err := s.load(context.Background())
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if len(ds) != c.n {
			t.Errorf("%v: %d matrices, want %d", c.args, len(ds), c.n)
		}
		for _, d := range ds {
			if d.Demand.N() == 0 || d.Label == "" {
				t.Errorf("%v: empty matrix or label", c.args)
			}
		}
	}
}

func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("0,1\n-1,0\n"), 0o644)
	jl := filepath.Join(dir, "r.jsonl")
	os.WriteFile(jl, []byte(`{"layer": 0, "experts": [1]}`), 0o644)
	out := filepath.Join(dir, "o.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", "show", "--phase", "forward"}, `--phase: unknown phase "forward"`},
		{[]string{"trace", "show", "--matrix", "99"}, "--matrix 99: built-in Mixtral-8x7B trace holds 30 matrices (indices 0..29;"},
		{[]string{"trace", "show", "--layer", "3"}, "no matrix of built-in Mixtral-8x7B trace matches"},
		{[]string{"trace", "show", "--bandwidth", "800"}, `--bandwidth: bandwidth "800" has no unit`},
		{[]string{"trace", "show", bad}, "--demand: " + bad + ": line 2, column 1: value \"-1\" is negative"},
		{[]string{"trace", "show", jl}, "token-routing JSONL must be imported first"},
		{[]string{"trace", "show", filepath.Join(dir, "none.csv")}, "none.csv: no such file"},
		{[]string{"trace", "show", "--layout", "rows"}, `--layout: unknown layout "rows"`},
		{[]string{"trace", "gen", "--model", "gpt", "-o", out}, `--model: unknown model "gpt"`},
		{[]string{"trace", "gen", "--hidden", "10", "-o", out}, "--hidden: only for --model custom"},
		{[]string{"trace", "gen", "--gpus", "1000", "-o", out}, "gpus = 1000: want 1..512"},
		{[]string{"trace", "gen"}, "-o: an output file is required"},
		{[]string{"trace", "gen", "--layers", "33", "-o", out}, "--layers 33: mixtral-8x7b has 32 layers"},
		{[]string{"trace", "export", bad, "--demand", bad, "-o", out}, "not both"},
		{[]string{"trace", "import", "--format", "routing-jsonl", jl, "-o", out}, "--experts 0: routing-jsonl needs"},
		{[]string{"trace", "import", "--format", "routing-jsonl", "--experts", "8", "--hidden", "8", "--placement", "nofile", jl, "-o", out}, `--placement "nofile"`},
		{[]string{"trace", "import", "--format", "xml", jl, "-o", out}, `--format "xml"`},
		{[]string{"trace", "export", "-o", filepath.Join(dir, "x.csv")}, "--matrix: CSV holds one matrix and 30 are selected"},
		{[]string{"trace", "export", "-o", filepath.Join(dir, "x.png")}, `--to "png"`},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			_, code, err := cli(t, c.args...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("exit %d, error %v; want exit 2 and one line containing %q", code, err, c.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed command left an output file")
	}
}
