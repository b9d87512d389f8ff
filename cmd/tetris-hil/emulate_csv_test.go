package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// emulate --csv: a header with a unit per column and bare numbers in the cells; each total row
// is the sum of its algorithm's rows (completion and bounds) and their ratio; --totals keeps the
// total rows only, and the table mode prints one line per algorithm. --json - and --csv - put
// the file's exact bytes on standard output instead of the table.
func TestEmulateCSVAndTotals(t *testing.T) {
	dir := t.TempDir()
	csvPath, jsonPath := filepath.Join(dir, "e.csv"), filepath.Join(dir, "e.json")
	base := []string{"emulate", "--algo", "tetris,bvn", "--demand", "../../examples/trace.json", "--layer", "1"}
	out, code, err := cli(t, append(base, "--csv", csvPath, "--json", jsonPath)...)
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	if !strings.Contains(out, "wrote "+jsonPath+", "+csvPath) {
		t.Errorf("does not say which files it wrote:\n%s", out)
	}
	f, _ := os.Open(csvPath)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, head)
		return -1
	}
	comp, bw, alg, mat := col("completion (s)"), col("bandwidth bound (s)"), col("algorithm"), col("matrix")
	sums := map[string][2]float64{}
	totals := 0
	for _, r := range rows[1:] {
		c, err1 := strconv.ParseFloat(r[comp], 64)
		b, err2 := strconv.ParseFloat(r[bw], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("a cell that is not a bare number: %v", r)
		}
		if r[mat] == "total" {
			totals++
			s := sums[r[alg]]
			if rel(c, s[0]) > 1e-12 || rel(b, s[1]) > 1e-12 {
				t.Errorf("%s total %g, %g; rows sum to %g, %g", r[alg], c, b, s[0], s[1])
			}
			ratio, _ := strconv.ParseFloat(r[col("completion / bandwidth bound")], 64)
			if rel(ratio, c/b) > 1e-12 {
				t.Errorf("%s total ratio %g, want %g", r[alg], ratio, c/b)
			}
			continue
		}
		s := sums[r[alg]]
		sums[r[alg]] = [2]float64{s[0] + c, s[1] + b}
	}
	if totals != 2 || len(rows) != 1+2*2+2 {
		t.Errorf("%d rows, %d totals; want 2 matrices × 2 algorithms + 2 totals", len(rows)-1, totals)
	}

	out, _, _ = cli(t, append(base, "--totals", "--csv", "-")...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "total,") {
		t.Errorf("--totals --csv -: want the header and 2 total rows, got\n%s", out)
	}
	out, _, _ = cli(t, append(base, "--totals")...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.Contains(lines[1], "COMPLETION(ms)") ||
		len(strings.Fields(lines[2])) != len(strings.Fields(lines[1])) || len(strings.Fields(lines[3])) != len(strings.Fields(lines[1])) {
		t.Errorf("--totals: want the describe line, a heading and one line per algorithm, a field per heading, got\n%s", out)
	}
	stdout, _, code, err := runCLI(t, append(base, "--json", "-")...)
	file, _ := os.ReadFile(jsonPath)
	if code != 0 || stdout != string(file) {
		t.Errorf("--json - (exit %d, %v) differs from the --json file", code, err)
	}
	if _, code, _ := cli(t, append(base, "--json", "-", "--csv", "-")...); code != 2 {
		t.Errorf("--json - --csv -: exit %d, want 2", code)
	}
}

func rel(a, b float64) float64 {
	if a == b {
		return 0
	}
	return (a - b) / max(abs(a), abs(b))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
