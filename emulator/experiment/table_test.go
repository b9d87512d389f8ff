package experiment

import (
	"context"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func TestTimeColumn(t *testing.T) {
	for _, c := range []struct {
		vs   []float64
		unit string
		want []string
	}{
		{[]float64{441.9e-6, 801.9e-6}, "µs", []string{"441.9", "801.9"}},
		{[]float64{441.9e-6, 15.3e-3}, "ms", []string{"0.4419", "15.3000"}},
		{[]float64{3.5, 2}, "s", []string{"3.500", "2.000"}},
		{[]float64{12e-9, 450e-9}, "ns", []string{"12.00", "450.00"}},
		{[]float64{0}, "s", []string{"0"}},
	} {
		col := units.SecondsColumn(c.vs)
		if col.Unit != c.unit {
			t.Errorf("%v: unit %s, want %s", c.vs, col.Unit, c.unit)
		}
		for i, v := range c.vs {
			if got := col.Format(v); got != c.want[i] {
				t.Errorf("%v: %g formats as %q, want %q", c.vs, v, got, c.want[i])
			}
		}
	}
}

func TestVariant(t *testing.T) {
	for _, c := range []struct {
		name string
		opts schedules.Options
		want string
	}{
		{"tetris", schedules.Options{}, ""},
		{"tetris", schedules.Options{NoPartial: true, NaiveRouting: true}, "--no-partial --naive-routing"},
		{"snb", schedules.Options{NoPartial: true}, "--no-partial"},
		{"bvn", schedules.Options{NoPartial: true, NoDegreeCoverage: true}, ""},
		{"sunflow", schedules.Options{RNBMapping: "looping"}, "--rnb-mapping looping"},
		{"bff", schedules.Options{RNBMapping: "earliest"}, ""},
	} {
		if got := Variant(c.name, c.opts); got != c.want {
			t.Errorf("Variant(%s, %+v) = %q, want %q", c.name, c.opts, got, c.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	cfg := Config{Options: schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6}}
	got := Describe("t.json", 3, cfg)
	for _, want := range []string{"t.json (3 matrices)", "bandwidth 800Gbps", "α_r 10µs", "fabric benes"} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe = %q, want it to hold %q", got, want)
		}
	}
	if got := Describe("m.csv", 1, cfg); !strings.HasPrefix(got, "m.csv (1 matrix)") {
		t.Errorf("Describe of one matrix = %q", got)
	}
}

// Every row of the table, totals included, has one whitespace-free cell per heading, so that
// awk '{print $N}' reads column N on every line: a label with layer, phase and a dataset holding
// a space, an ablation flag with a value, and a matrix of no trace all stay one field each.
func TestWriteTableOneTokenPerCell(t *testing.T) {
	out, err := Run(context.Background(), handMatrices(t), handConfig(1), Pool{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range out.Records {
		if out.Records[i].Matrix.Index == 1 {
			out.Records[i].Matrix = emulator.MatrixRef{Index: 1, Layer: 3, Phase: "combine", Dataset: "wiki text"}
		}
		if out.Records[i].Algorithm == serialAlgo {
			out.Records[i].Variant = "--no-partial --wear-weight 4"
		}
	}
	var b strings.Builder
	if err := out.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	head := strings.Fields(lines[0])
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	if len(lines) != 1+len(out.Records)+len(out.Totals) {
		t.Fatalf("%d lines, want a heading, %d runs and %d totals:\n%s", len(lines), len(out.Records), len(out.Totals), b.String())
	}
	labels, variants := map[string]bool{}, map[string]bool{}
	for n, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) != len(head) {
			t.Errorf("row %d has %d fields, the heading %d:\n%s", n+1, len(f), len(head), b.String())
			continue
		}
		labels[f[col["LABEL"]]], variants[f[col["VARIANT"]]] = true, true
	}
	for _, want := range []string{"-", "L3-combine-wiki_text", "2-matrices"} {
		if !labels[want] {
			t.Errorf("no LABEL %q in\n%s", want, b.String())
		}
	}
	for _, want := range []string{"-", "--no-partial,--wear-weight=4"} {
		if !variants[want] {
			t.Errorf("no VARIANT %q in\n%s", want, b.String())
		}
	}
}
