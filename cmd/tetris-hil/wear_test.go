package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
)

// TestEmulateWear: the per-switch counts of every run sum to its state changes, the most-changed
// switch of the pass is the largest of their sums, and the lifetime line is rated cycles over
// (changes a pass × passes a second), in the unit it names.
func TestEmulateWear(t *testing.T) {
	out := filepath.Join(t.TempDir(), "w.json")
	stdout, code, err := cli(t, "emulate", "--layer", "0", "--algo", "tetris,tetris-wear,bvn", "--wear-weight", "4", "--wear",
		"--switch-cycles", "2e8", "--passes-per-second", "50", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	pass := map[string]map[[2]int]int{}
	total := map[string]int{}
	for _, r := range rep.Runs {
		sum, most := 0, 0
		if pass[r.Algorithm] == nil {
			pass[r.Algorithm] = map[[2]int]int{}
		}
		for _, c := range r.StateChangesPerSwitch {
			sum += c.Count
			most = max(most, c.Count)
			pass[r.Algorithm][[2]int{c.Stage, c.Index}] += c.Count
		}
		if sum != r.StateChanges || r.StateChanges != r.Result.StateChanges || most != r.StateChangesMax {
			t.Fatalf("%s on %s: per-switch sum %d, max %d; state_changes %d (result %d), state_changes_max %d",
				r.Algorithm, r.Matrix.Label, sum, most, r.StateChanges, r.Result.StateChanges, r.StateChangesMax)
		}
		total[r.Algorithm] += sum
	}
	if total["tetris-wear"] != total["tetris"] {
		t.Errorf("tetris and tetris-wear both at --wear-weight 4: %d and %d changes over the pass", total["tetris"], total["tetris-wear"])
	}
	// Tetris as published, on the same matrices, changes switches more often.
	plain, code, err := cli(t, "emulate", "--layer", "0", "--algo", "tetris", "--wear")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	m := regexp.MustCompile(`switch state changes of tetris \(rows: stage, columns: switch index; (\d+) in all\)`).FindStringSubmatch(plain)
	if m == nil {
		t.Fatalf("no heatmap heading:\n%s", plain)
	}
	if n, _ := strconv.Atoi(m[1]); n <= total["tetris"] {
		t.Errorf("Tetris as published: %d changes over the pass; with --wear-weight 4: %d", n, total["tetris"])
	}
	line := regexp.MustCompile(`switch (\d+):(\d+) changes (\d+) times a pass; at 50 passes/s it reaches 2e8 cycles in ([0-9.e+]+) (\w+)`)
	ms := line.FindAllStringSubmatch(stdout, -1)
	if len(ms) != 3 {
		t.Fatalf("%d lifetime lines, want 3:\n%s", len(ms), stdout)
	}
	unit := map[string]float64{"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400, "years": 365.25 * 86400}
	for i, algo := range []string{"tetris", "tetris-wear", "bvn"} {
		m := ms[i]
		most := 0
		for _, c := range pass[algo] {
			most = max(most, c)
		}
		stage, _ := strconv.Atoi(m[1])
		idx, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		if n != most || pass[algo][[2]int{stage, idx}] != most {
			t.Errorf("%s: line names switch %d:%d with %d changes; the pass's most-changed switch has %d", algo, stage, idx, n, most)
		}
		v, _ := strconv.ParseFloat(m[4], 64)
		got, want := v*unit[m[5]], 2e8/(float64(most)*50)
		if got < want*0.99 || got > want*1.01 {
			t.Errorf("%s: lifetime %s %s = %g s, want %g s", algo, m[4], m[5], got, want)
		}
	}
	if !strings.Contains(stdout, "switch state changes of tetris-wear (rows: stage") {
		t.Errorf("no heatmap for tetris-wear:\n%s", stdout)
	}
}
