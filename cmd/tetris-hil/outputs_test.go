package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A new --out with a trailing slash, or under parents that do not exist yet, is created (and the
// run says so); a path through a file is refused before any work, naming the file.
func TestOutDirCreatedWithParents(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	if err := os.WriteFile("a-file", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	small := []string{"--algo", "tetris,bvn", "--bandwidth", "100Gbps", "--reconfig", "1us", "--progress", "off"}
	for _, c := range []struct {
		args    []string
		made    string // directory the run creates ("" if it must be refused)
		written string // a file it writes there
		refusal string
	}{
		{append([]string{"sweep", "--out", "sweep/"}, small...), "sweep", "sweep/sweep.csv", ""},
		{append([]string{"sweep", "--out", "runs/deep/s1"}, small...), "runs, runs/deep, runs/deep/s1", "runs/deep/s1/sweep.json", ""},
		{[]string{"emulate", "--matrix", "0", "--algo", "tetris", "--timeline", "tl/m0/"}, "tl, tl/m0", "tl/m0/timelines.json", ""},
		{append([]string{"sweep", "--out", "a-file/s1"}, small...), "", "", "a-file is a file, not a directory"},
		{append([]string{"sweep", "--out", "a-file"}, small...), "", "", "a-file is not a directory"},
	} {
		out, code, err := cli(t, c.args...)
		if c.refusal != "" {
			if code != 2 || err == nil || !strings.Contains(err.Error(), c.refusal) {
				t.Errorf("%v: exit %d (%v), want 2 with %q", c.args, code, err, c.refusal)
			}
			continue
		}
		if code != 0 {
			t.Errorf("%v: exit %d (%v)\n%s", c.args, code, err, out)
			continue
		}
		if !strings.Contains(out, "created directory "+c.made+"\n") {
			t.Errorf("%v: does not say it created %s:\n%s", c.args, c.made, out)
		}
		if _, err := os.Stat(c.written); err != nil {
			t.Errorf("%v: %v", c.args, err)
		}
		// Run again into the now existing directory: nothing to create, nothing said.
		if out, _, _ := cli(t, c.args...); strings.Contains(out, "created directory") {
			t.Errorf("%v again: says it created a directory that existed:\n%s", c.args, out)
		}
	}
	if es, _ := filepath.Glob(filepath.Join(root, "*", ".tetris-hil.lock")); len(es) != 0 {
		t.Errorf("locks left behind: %v", es)
	}
}
