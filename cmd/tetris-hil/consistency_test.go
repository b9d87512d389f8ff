package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// One meaning per flag name across the tree: -o is a single output file (--output), --out a
// directory, --json a file with - for standard output, --seed the one seed; renamed flags stay
// as hidden deprecated aliases.
func TestFlagNamesMeanOneThing(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			where := c.CommandPath() + " --" + f.Name
			if f.Hidden || f.Deprecated != "" {
				return
			}
			switch {
			case f.Shorthand == "o" && f.Name != "output":
				t.Errorf("%s: -o is --output (a single file) everywhere", where)
			case f.Name == "out" && !strings.Contains(f.Usage, "director"):
				t.Errorf("%s: --out is a directory everywhere, usage %q", where, f.Usage)
			case f.Name == "json" && f.NoOptDefVal != "-" && !strings.Contains(f.Usage, "- for standard output"):
				t.Errorf("%s: --json is a file with - for standard output, usage %q", where, f.Usage)
			case strings.HasSuffix(f.Name, "seed") && f.Name != "seed":
				t.Errorf("%s: the seed flag is --seed everywhere", where)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
}

// Scripts written against the old names keep working, with a note on standard error.
func TestRenamedFlagsStillWork(t *testing.T) {
	dir := t.TempDir()
	root := newRootCmd()
	for _, c := range []struct {
		path          []string
		old, new, val string
	}{
		{[]string{"gpu-bench"}, "fake-seed", "seed", "3"},
		{[]string{"replay"}, "fake-seed", "seed", "7"},
		{[]string{"calibrate"}, "out", "output", "x.json"},
	} {
		cmd, _, err := root.Find(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags([]string{"--" + c.old, c.val}); err != nil {
			t.Fatalf("%v --%s: %v", c.path, c.old, err)
		}
		if got := cmd.Flags().Lookup(c.new).Value.String(); got != c.val {
			t.Errorf("%v --%s %s sets --%s to %q", c.path, c.old, c.val, c.new, got)
		}
		if f := cmd.Flags().Lookup(c.old); !f.Hidden || f.Deprecated == "" {
			t.Errorf("%v --%s: not a hidden deprecated alias", c.path, c.old)
		}
	}
	inv := filepath.Join(dir, "inv.json")
	out, code, _ := cli(t, "devices", "--fake", "--json="+inv)
	if code != 0 || !strings.Contains(out, "wrote "+inv) {
		t.Errorf("devices --json=FILE: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(inv); err != nil || !strings.HasPrefix(string(b), "{") {
		t.Errorf("devices --json=FILE wrote %q (%v)", b, err)
	}
	if out, code, _ := cli(t, "devices", "--fake", "--json"); code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("devices --json alone: exit %d, want JSON on stdout:\n%.200s", code, out)
	}
}

// Every command that writes a file names it on the way out.
func TestCommandsSayWhatTheyWrote(t *testing.T) {
	knee, _ := filepath.Abs("testdata/calibrate/knee3.json")
	wiring, _ := filepath.Abs(serialWiring)
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		file string
	}{
		{[]string{"trace", "export", "--matrix", "0", "-o", "m.csv"}, "m.csv"},
		{[]string{"schedule", "--algo", "tetris", "--demand", "m.csv", "-o", "s.json"}, "s.json"},
		{[]string{"emulate", "--demand", "m.csv", "--json", "e.json"}, "e.json"},
		{[]string{"emulate", "--demand", "m.csv", "--csv", "e.csv"}, "e.csv"},
		{[]string{"broadcast", "--nodes", "64", "--json", "b.json"}, "b.json"},
		{[]string{"broadcast", "sweep", "--nodes", "16,64", "--plot", "b.svg"}, "b.svg"},
		{[]string{"calibrate", "show", knee, "--plot", "c.png"}, "c.png"},
		{[]string{"switch", "bench", "--fake", "--wiring", wiring, "--rounds", "5", "-o", "sb.json"}, "sb.json"},
		{[]string{"devices", "--fake", "--json=d.json"}, "d.json"},
		{[]string{"sweep", "--algo", "tetris,bvn", "--bandwidth", "100Gbps", "--reconfig", "1us", "--out", "sw"}, "sw/sweep.csv"},
	} {
		out, code, err := cli(t, c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d (%v)\n%s", c.args, code, err, out)
			continue
		}
		if _, err := os.Stat(c.file); err != nil {
			t.Errorf("%v: %v", c.args, err)
		}
		if !strings.Contains(out, c.file) {
			t.Errorf("%v: does not name %s:\n%s", c.args, c.file, out)
		}
	}
}
