package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A selection that is no selection (-1, given) or that matches nothing says what the input
// holds, in the user's own flags, and never shows the -1 that stands for a flag left out.
func TestDemandSelectionErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"emulate", "--matrix", "-1"}, "--matrix -1: built-in Mixtral-8x7B trace holds 30 matrices (indices 0..29; leave --matrix out for all)"},
		{[]string{"sweep", "--matrix", "-1", "--out", "x"}, "--matrix -1:"},
		{[]string{"schedule", "--layer", "-1", "--matrix", "0"}, "--layer -1: want a layer number ≥ 0"},
		{[]string{"emulate", "--demand", "../../examples/trace.json", "--layer", "3"},
			"--layer 3: no matrix of ../../examples/trace.json matches (it holds 4 matrices, layers 0, 1, phases dispatch, combine"},
		{[]string{"emulate", "--demand", "../../examples/demand.csv", "--phase", "combine"},
			"--phase combine: no matrix of ../../examples/demand.csv matches (it holds 1 matrix, layers 0, phases dispatch"},
	} {
		_, code, err := cli(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "-1 --") {
			t.Errorf("%v: exit %d, %v; want 2 with %q", c.args, code, err, c.want)
		}
	}
	if _, err := os.Stat("x"); err == nil {
		os.RemoveAll("x")
		t.Error("a refused sweep created its --out")
	}
}

// A CSV whose first line is a header of names: the matrix below it is read, and the run says
// on standard error that the header was skipped; a file without one says nothing.
func TestCSVHeaderSaidSo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	dir := t.TempDir()
	with, without := filepath.Join(dir, "h.csv"), filepath.Join(dir, "n.csv")
	os.WriteFile(with, []byte("# a comment\nGPU0,GPU1,GPU2\n0,5,1\n7,0,2\n3,3,0\n"), 0o644)
	os.WriteFile(without, []byte("0,5,1\n7,0,2\n3,3,0\n"), 0o644)
	run := func(path string) (string, string) {
		cmd := exec.Command(os.Args[0], "emulate", "--demand", path, "--algo", "tetris", "--totals")
		cmd.Env = append(os.Environ(), envBeMain+"=1")
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	out1, err1 := run(with)
	if !strings.Contains(err1, "line 2 (GPU0,GPU1,GPU2) is a header of names, not byte counts: skipped; the matrix is the 3×3 rows below it") {
		t.Errorf("header not reported: %q", err1)
	}
	out2, err2 := run(without)
	if err2 != "" {
		t.Errorf("no header, yet stderr %q", err2)
	}
	if strings.ReplaceAll(out1, with, "X") != strings.ReplaceAll(out2, without, "X") {
		t.Errorf("the header changed the numbers:\n%s\n%s", out1, out2)
	}
}
