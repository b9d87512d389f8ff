package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// report renders what replay and reproduce write, as its help promises: a replay directory's
// live-vs-predicted table, figures and switch log; a reproduce directory's paper-vs-ours tables.
func TestReportReplayAndReproduce(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole) // the workers replay starts are this test binary
	dir := t.TempDir()
	replay, repro := filepath.Join(dir, "r1"), filepath.Join(dir, "repro")
	if out, code, err := cli(t, "replay", "--fake", "--fake-gpus", "4", "--demand", "testdata/emulate/hand4.csv",
		"--algo", "tetris,bvn", "--reconfig", "1ms", "--out", replay); code != 0 {
		t.Fatalf("replay: exit %d: %v\n%s", code, err, out)
	}
	if out, code, err := cli(t, "reproduce", "fig6", "--progress", "off", "--out", repro); code != 0 {
		t.Fatalf("reproduce: exit %d: %v\n%s", code, err, out)
	}
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{replay, []string{"<h2>Live replay</h2>", "<td>0 bvn</td>", `alt="start differences"`, "Switch log: 0 tetris"}},
		{repro, []string{"Reproduction of the Tetris paper", "not stated (longer: Figure 6(a))"}},
	} {
		html := filepath.Join(dir, filepath.Base(c.dir)+".html")
		if out, code, err := cli(t, "report", c.dir, "-o", html); code != 0 {
			t.Fatalf("report %s: exit %d: %v\n%s", c.dir, code, err, out)
		}
		b, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("report of %s lacks %q", filepath.Base(c.dir), w)
			}
		}
	}
}
