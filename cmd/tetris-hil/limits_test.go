package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Repetition counts above the worker protocol's limit are a usage error naming the flag, the
// value and the limit, before any worker starts.
func TestRepsLimitFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gpu-bench", "--fake", "--reps", "1000000000"}, `--reps 1000000000: at most 100000`},
		{[]string{"gpu-bench", "--fake", "--reps", "5000000", "--max", "4KiB"}, `--reps 5000000: at most 100000`},
		{[]string{"gpu-bench", "--fake", "--warmup", "100001"}, `--warmup 100001: at most 100000`},
		{[]string{"calibrate", "--fake", "--reps", "200000", "-o", t.TempDir() + "/c.json"}, `--reps 200000: at most 100000`},
	} {
		out, code, err := cli(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v (%s), want exit 2 naming %q", c.args, code, err, out, c.want)
		}
	}
}

// A rerun of emulate --timeline into the same directory with fewer algorithms leaves only its own
// runs' files (and the manifest); an unreadable manifest there is refused before any work.
func TestEmulateTimelineRerunRemovesStale(t *testing.T) {
	dir := t.TempDir()
	for _, algo := range []string{"tetris,bvn", "tetris"} {
		if out, code, err := cli(t, "emulate", "--matrix", "0", "--algo", algo, "--timeline", dir); code != 0 {
			t.Fatalf("--algo %s: exit %d: %v\n%s", algo, code, err, out)
		}
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	want := []string{"m0-tetris.schedule.json", "m0-tetris.timeline.json", "m0-tetris.trace.json", "timelines.json"}
	if !slices.Equal(names, want) {
		t.Errorf("after the rerun: %v, want %v", names, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "timelines.json"), []byte(`{"version": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err := cli(t, "emulate", "--matrix", "0", "--algo", "tetris", "--timeline", dir)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "field version: 7") {
		t.Errorf("a manifest of another version: exit %d, %v", code, err)
	}
}
