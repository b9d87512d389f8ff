package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	cands := []string{"tetris", "tetris+", "bvn", "bvn-maxmin", "sunflow", "emulate", "sweep", "schedule"}
	for _, c := range []struct {
		word string
		want []string
	}{
		{"tetirs", []string{"tetris"}},
		{"Tetris", []string{"tetris"}}, // the same but for case: that one alone
		{"bvnn", []string{"bvn"}},
		{"emulat", []string{"emulate"}},
		{"swep", []string{"sweep"}},
		{"SUNFLOW", []string{"sunflow"}},
		{"zzz", nil},
		{"x", nil},
	} {
		if got := suggest(c.word, cands); !reflect.DeepEqual(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("suggest(%q) = %v, want %v", c.word, got, c.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

// A typo in a command, a flag, an algorithm or a figure: exit 2, one line, the nearest names.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"emulat", "--matrix", "0"}, `unknown command "emulat" for "tetris-hil"; did you mean emulate?`},
		{[]string{"trace", "shwo"}, `unknown command "shwo" for "tetris-hil trace"; did you mean show?`},
		{[]string{"emulate", "--matrx", "0"}, "unknown flag: --matrx; did you mean --matrix?"},
		{[]string{"sweep", "--bandwith", "100Gbps", "--out", "x"}, "did you mean --bandwidth?"},
		{[]string{"emulate", "--algo", "tetirs"}, `--algo "tetirs": unknown algorithm; did you mean tetris?`},
		{[]string{"emulate", "--algo", "tetris,BVN"}, `--algo "BVN": unknown algorithm; did you mean bvn?`},
		{[]string{"schedule", "--algo", "nonesuch"}, "tetris-hil algorithms lists them"},
		{[]string{"reproduce", "fig88", "--out", "x"}, `figure "fig88": unknown figure; did you mean fig8?`},
	} {
		out, code, err := cli(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, %v; want 2 and one line with %q\n%s", c.args, code, err, c.want, out)
		}
		if err != nil && strings.Contains(err.Error(), "[") {
			t.Errorf("%v: the message shows a Go slice: %v", c.args, err)
		}
	}
}

func TestAlgorithmsAndFigureLists(t *testing.T) {
	out, code, _ := cli(t, "algorithms", "--names")
	if code != 0 || !strings.HasPrefix(out, "tetris\n") || !strings.Contains(out, "\nbvn\n") {
		t.Errorf("algorithms --names: exit %d:\n%s", code, out)
	}
	out, code, _ = cli(t, "algorithms")
	if code != 0 || !strings.Contains(out, "ALGORITHM") || !strings.Contains(out, "Birkhoff–von Neumann") {
		t.Errorf("algorithms: exit %d:\n%s", code, out)
	}
	out, code, _ = cli(t, "reproduce", "--list")
	if code != 0 || !strings.Contains(out, "  fig8 ") || !strings.Contains(out, "  fig13 ") {
		t.Errorf("reproduce --list: exit %d:\n%s", code, out)
	}
	if _, code, _ := cli(t, "reproduce", "--list", "fig8"); code != 2 {
		t.Errorf("reproduce --list fig8: exit %d, want 2", code)
	}
}

// The completion scripts ask the binary for values: algorithms (each entry of a list), figures,
// and the fixed choices of flags such as --progress.
func TestValueCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "emulate", "--algo", ""}, []string{"tetris\n", "bvn\n", "all\n"}},
		{[]string{"__complete", "sweep", "--algo", "tetris,b"}, []string{"tetris,bvn\n", "tetris,bff\n"}},
		{[]string{"__complete", "reproduce", ""}, []string{"fig8\n", "fig13\n", "all\n"}},
		{[]string{"__complete", "calibrate", "--progress", ""}, []string{"auto\n", "on\n", "off\n"}},
		{[]string{"__complete", "schedule", "--fabric", ""}, []string{"benes\n", "crossbar\n"}},
		{[]string{"__complete", "trace", "show", "--log-level", ""}, []string{"debug\n", "warn\n"}},
	} {
		out, code, err := cli(t, c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d (%v)", c.args, code, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: completions lack %q:\n%s", c.args, w, out)
			}
		}
	}
}
