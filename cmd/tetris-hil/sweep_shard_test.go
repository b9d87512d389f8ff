package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// cliProcess starts the test binary as the tetris-hil binary (see TestMain) with args.
func cliProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"--log-level", "error"}, args...)...)
	cmd.Env = append(os.Environ(), envBeCLI+"="+cliRole)
	return cmd
}

// TestSweepShardsInProcessesMergeToOneRun runs a sweep unsharded, then as three shards in three
// concurrent processes, merges them in a fourth, and finds every file the unsharded run wrote
// byte-identical, except that sweep.json also lists the shards.
func TestSweepShardsInProcessesMergeToOneRun(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one")
	if out, code, err := cli(t, smallSweep(one, 1)...); code != 0 {
		t.Fatalf("unsharded sweep: exit %d: %v\n%s", code, err, out)
	}
	const n = 3
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for k := range n {
		args := append(smallSweep(filepath.Join(dir, fmt.Sprintf("shard-%d", k)), 1), "--shard", fmt.Sprintf("%d/%d", k, n))
		p := cliProcess(args...)
		var b bytes.Buffer
		p.Stdout, p.Stderr = &b, &b
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, p), append(outs, &b)
	}
	for k, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", k, err, outs[k])
		}
		if !strings.Contains(outs[k].String(), fmt.Sprintf("shard %d/%d: units", k, n)) {
			t.Errorf("shard %d printed %q", k, outs[k])
		}
	}
	merged := filepath.Join(dir, "merged")
	// The shards in reverse order: the merge sorts them.
	out, err := cliProcess("sweep", "merge", filepath.Join(dir, "shard-2"), filepath.Join(dir, "shard-1"),
		filepath.Join(dir, "shard-0", "sweep-shard.json"), "--out", merged).CombinedOutput()
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	files, err := filepath.Glob(filepath.Join(one, "*"))
	if err != nil || len(files) < 4 {
		t.Fatalf("unsharded run wrote %v (%v)", files, err)
	}
	for _, f := range files {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(merged, filepath.Base(f)))
		if err != nil {
			t.Errorf("merge did not write %s: %v", filepath.Base(f), err)
			continue
		}
		if filepath.Base(f) == "sweep.json" {
			var w, g map[string]any
			if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
				t.Fatalf("sweep.json does not parse:\n%s\n%s", want, got)
			}
			shards, _ := g["shards"].([]any)
			delete(g, "shards")
			if len(shards) != n || !reflect.DeepEqual(g, w) {
				t.Errorf("merged sweep.json (%d shards listed) differs from one run's:\n%s\n%s", len(shards), got, want)
			}
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("merged %s differs from the unsharded run's", filepath.Base(f))
		}
	}
	if more, _ := filepath.Glob(filepath.Join(merged, "*")); len(more) != len(files) {
		t.Errorf("merge wrote %d files, one run %d", len(more), len(files))
	}
}

func TestSweepShardBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{append(smallSweep(filepath.Join(dir, "a"), 1), "--shard", "3/3"), 2, `--shard "3/3"`},
		{append(smallSweep(filepath.Join(dir, "a"), 1), "--shard", "x"), 2, `--shard "x"`},
		{[]string{"sweep", "merge", "--out", filepath.Join(dir, "m")}, 2, "give the shard directories"},
		{[]string{"sweep", "merge", filepath.Join(dir, "nope")}, 2, "--out: an output directory is required"},
		{[]string{"sweep", "merge", filepath.Join(dir, "nope"), "--out", filepath.Join(dir, "m")}, 1, "nope"},
	} {
		out, code, err := cli(t, tc.args...)
		out += fmt.Sprint(err)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d mentioning %q", tc.args, code, out, tc.code, tc.want)
		}
	}
}
