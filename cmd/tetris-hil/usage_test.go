package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

// allCommands lists every command of the tree as its argument path ("trace show" is
// ["trace", "show"]), the root first.
func allCommands() [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(newRootCmd(), nil)
	return out
}

// Every command: --help exits 0, an unknown flag exits 2 with one line naming it.
func TestExitCodesEveryCommand(t *testing.T) {
	for _, path := range allCommands() {
		name := strings.Join(append([]string{"tetris-hil"}, path...), " ")
		t.Run(name, func(t *testing.T) {
			if out, code, _ := cli(t, append(path, "--help")...); code != 0 || !strings.Contains(out, "Usage:") {
				t.Errorf("%s --help: exit %d, want 0 with a usage:\n%s", name, code, out)
			}
			out, code, err := cli(t, append(path, "--no-such-flag")...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), "--no-such-flag") {
				t.Errorf("%s --no-such-flag: exit %d (%v), want 2 naming the flag\n%s", name, code, err, out)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%s --no-such-flag: message of several lines: %q", name, err)
			}
		})
	}
}

// Bad usage exits 2 with one line that names what was wrong, never a parser's raw message.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string // in the message
	}{
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"trace", "bogus"}, `unknown command "bogus" for "tetris-hil trace"`},
		{[]string{"switch", "bogus"}, "tetris-hil switch"},
		{[]string{"broadcast", "sweep", "extra"}, "tetris-hil broadcast sweep"},
		{[]string{"trace", "show", "a", "b"}, "tetris-hil trace show"},
		{[]string{"trace", "export", "a", "b"}, "tetris-hil trace export"},
		{[]string{"gpu-bench", "--fake", "--src", "9"}, "--src 9: this machine has GPUs 0..7"},
		{[]string{"gpu-bench", "--fake", "--dst", "-1"}, "--dst -1"},
		{[]string{"emulate", "--matrix", "abc"}, `--matrix "abc": want an integer`},
		{[]string{"emulate", "--layer", "99999999999999999999"}, `--layer "99999999999999999999": out of range`},
		{[]string{"trace", "show", "--count-diagonal=maybe"}, `--count-diagonal "maybe": want true or false`},
		{[]string{"emulate", "--tr", "1ms"}, `--tr "1ms": only --reconfig-model controller uses it`},
		{[]string{"emulate", "--tw", "1ms"}, `--tw "1ms": only --reconfig-model controller`},
		{[]string{"sweep", "--tr", "1ms", "--out", filepath.Join(dir, "s")}, `--tr "1ms"`},
		{[]string{"sweep", "--bandwidth", "100Gbps,,200Gbps", "--out", filepath.Join(dir, "s")}, `--bandwidth "100Gbps,,200Gbps": an entry of the comma-separated list is empty`},
		{[]string{"sweep", "--reconfig", "1us,", "--out", filepath.Join(dir, "s")}, `--reconfig "1us,"`},
		{[]string{"emulate", "--algo", "tetris,,bvn"}, `--algo "tetris,,bvn": an entry`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, code, err := cli(t, c.args...)
			if code != 2 || err == nil {
				t.Fatalf("exit %d (%v), want 2\n%s", code, err, out)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not contain %q", msg, c.want)
			}
			for _, raw := range []string{"strconv.", "\n", "invalid argument"} {
				if strings.Contains(msg, raw) {
					t.Errorf("message %q holds %q: a raw parser message or several lines", msg, raw)
				}
			}
		})
	}
}

// A group command without a subcommand prints its help and exits 0.
func TestGroupWithoutSubcommand(t *testing.T) {
	for _, g := range []string{"trace", "switch"} {
		if out, code, err := cli(t, g); code != 0 || !strings.Contains(out, "Available Commands") {
			t.Errorf("tetris-hil %s: exit %d (%v), want 0 with the help\n%s", g, code, err, out)
		}
	}
}

// The help of every command, as golden files: a change to any flag's text shows in review.
// pflag takes a backticked word of a usage as the flag's argument name, so none may appear;
// defaults are printed once.
func TestHelpGoldens(t *testing.T) {
	for _, path := range allCommands() {
		name := strings.Join(append([]string{"tetris-hil"}, path...), " ")
		t.Run(name, func(t *testing.T) {
			out, code, _ := cli(t, append(path, "--help")...)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			for _, line := range strings.Split(out, "\n") {
				trimmed := strings.TrimSpace(line)
				if !strings.HasPrefix(trimmed, "-") {
					continue
				}
				if f := strings.Fields(trimmed); len(f) > 2 && strings.Contains(f[len(f)-1], "show") && strings.HasPrefix(f[1], "trace") {
					t.Errorf("flag line takes a backticked word as its argument name: %s", trimmed)
				}
				if strings.Count(line, "(default") > 1 {
					t.Errorf("default shown twice: %s", trimmed)
				}
				if strings.Contains(line, "(default )") {
					t.Errorf("empty default shown: %s", trimmed)
				}
			}
			file := "root"
			if len(path) > 0 {
				file = strings.Join(path, "_")
			}
			goldenfile.Check(t, filepath.Join("testdata", "help", file+".txt"), []byte(out))
		})
	}
}

// The examples in the help of the trace commands run as printed (trace gen's first example
// writes the t.json the others read).
func TestTraceExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 64-GPU trace")
	}
	t.Chdir(t.TempDir())
	root := newRootCmd()
	for _, path := range [][]string{{"trace", "gen"}, {"trace", "export"}, {"trace", "show"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Example == "" {
			t.Fatalf("%s has no example", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			args := strings.Fields(line)
			if len(args) < 2 || args[0] != "tetris-hil" {
				t.Fatalf("%s example %q does not start with tetris-hil", c.CommandPath(), line)
			}
			if out, code, err := cli(t, args[1:]...); code != 0 {
				t.Errorf("%s: exit %d (%v)\n%s", line, code, err, out)
			}
		}
	}
}

// emulate's table opens with how it was run, labels ablations, and counts rounds for barrier
// schedules and groups for partial ones.
func TestEmulateTableSaysHowItRan(t *testing.T) {
	out, code, err := cli(t, "emulate", "--matrix", "0", "--algo", "tetris,bvn", "--no-partial")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	lines := strings.Split(out, "\n")
	if want := "built-in Mixtral-8x7B trace (1 matrix) · bandwidth 800Gbps · α_r 10µs · fabric benes · transfer bandwidth 800Gbps · reconfiguration parallel α_r=10µs"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	// Columns MATRIX LABEL ALGORITHM VARIANT COMPLETION(µs) … STEPS KIND STATE_CHANGES.
	tetris, bvn := strings.Fields(lines[2]), strings.Fields(lines[3])
	if !strings.Contains(lines[1], "COMPLETION(µs)") || len(tetris) != 11 || tetris[2] != "tetris" || tetris[3] != "--no-partial" ||
		len(bvn) != 11 || bvn[3] != "-" || bvn[8] != "43" || bvn[9] != "rounds" {
		t.Errorf("table:\n%s", out)
	}
	out, _, _ = cli(t, "emulate", "--matrix", "0", "--algo", "tetris")
	if f := strings.Fields(strings.Split(out, "\n")[2]); len(f) != 11 || f[1] != "L0-dispatch-arxiv" || f[8] != "7" || f[9] != "groups" ||
		strings.Contains(out, "--no-partial") {
		t.Errorf("tetris as published:\n%s", out)
	}
}

// verify --timeline with another schedule's timeline says whose it is, in one line (exit 2),
// instead of listing every circuit as missing.
func TestVerifyTimelineOfAnotherSchedule(t *testing.T) {
	dir := t.TempDir()
	tl := filepath.Join(dir, "tl")
	if out, code, err := cli(t, "emulate", "--matrix", "0", "--algo", "tetris", "--timeline", tl, "--progress", "off"); code != 0 {
		t.Fatalf("emulate: exit %d (%v)\n%s", code, err, out)
	}
	bvn := filepath.Join(dir, "b.json")
	if out, code, err := cli(t, "schedule", "--algo", "bvn", "--matrix", "0", "-o", bvn); code != 0 {
		t.Fatalf("schedule: exit %d (%v)\n%s", code, err, out)
	}
	out, code, err := cli(t, "verify", bvn, "--matrix", "0", "--timeline", filepath.Join(tl, "m0-tetris.timeline.json"))
	if code != 2 || err == nil || strings.Contains(out, "missing from the timeline") ||
		!strings.Contains(err.Error(), "the timeline belongs to another schedule") || !strings.Contains(err.Error(), "tetris on matrix 0") ||
		strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("exit %d (%v)\n%s", code, err, out)
	}
}

// trace import recognises token-routing JSONL by its content under any name, and keeps its
// dataset and model.
func TestTraceImportDetectsRoutingJSONL(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "routing.json") // a logger's name, not .jsonl
	lines := `{"layer":0,"experts":[1,2],"dataset":"gsm8k","model":"mixtral-8x7b"}` + "\n" + `{"layer":1,"experts":[0,5],"dataset":"gsm8k","model":"mixtral-8x7b"}` + "\n"
	if err := os.WriteFile(in, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.json")
	if got, code, err := cli(t, "trace", "import", in, "--experts", "8", "--hidden", "4096", "-o", out); code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, got)
	}
	got, code, err := cli(t, "trace", "show", out)
	if code != 0 || !strings.Contains(got, "model mixtral-8x7b") || !strings.Contains(got, "gsm8k") {
		t.Errorf("exit %d (%v)\n%s", code, err, got)
	}
	// Without the routing options it says which one is missing, not "run trace import".
	if _, code, err := cli(t, "trace", "import", in, "-o", out); code != 2 || !strings.Contains(err.Error(), "--experts") {
		t.Errorf("without --experts: exit %d (%v)", code, err)
	}
}

// Without --demand, verify names the built-in trace when asking for --matrix.
func TestVerifyNamesTheBuiltInTrace(t *testing.T) {
	s := filepath.Join(t.TempDir(), "s.json")
	if out, code, err := cli(t, "schedule", "--algo", "tetris", "--matrix", "0", "-o", s); code != 0 {
		t.Fatalf("schedule: exit %d (%v)\n%s", code, err, out)
	}
	_, code, err := cli(t, "verify", s)
	if code != 2 || err == nil || strings.Contains(err.Error(), "--demand  ") ||
		!strings.Contains(err.Error(), "the built-in Mixtral-8x7B trace holds 30 matrices") {
		t.Errorf("exit %d (%v)", code, err)
	}
}
