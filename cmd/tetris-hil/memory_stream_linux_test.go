package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
)

// TestEmulateTimelineStreamsRuns: emulate --timeline writes each run's files as the run finishes
// and drops it, so a limit that holds the largest run but not all of them together (which, kept
// to the end, were refused before planning) lets an 8-matrix trace with every algorithm through,
// within that limit, and the files are byte for byte those of a run without a limit.
func TestEmulateTimelineStreamsRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	if out, code, err := cli(t, "trace", "gen", "--model", "mixtral-8x22b", "--gpus", "16", "--layers", "4",
		"--tokens-per-gpu", "512", "--expert-per-gpu", "-o", path); code != 0 {
		t.Fatalf("trace gen: exit %d: %v\n%s", code, err, out)
	}
	src := demandSource{path: path, matrix: -1, layer: -1, layout: "layers", maxPorts: 4096}
	named, err := src.load()
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]experiment.Matrix, len(named))
	for i, nd := range named {
		ms[i] = nd.matrix()
	}
	algos, err := lookupAlgos("all")
	if err != nil {
		t.Fatal(err)
	}
	cfg := experiment.Config{Algorithms: algos, KeepRuns: true}
	all := experiment.EstimateMemory(ms, cfg, 1)
	largest, base := int64(0), all.Peak
	for _, r := range all.Runs {
		largest = max(largest, r.Bytes)
		base -= r.Bytes
	}
	// Room for the base and four of the largest runs at once, not for all of them kept together.
	limit := base + 4*largest
	if limit >= all.Peak {
		t.Fatalf("no limit between the largest run (%d bytes) and all runs kept (%d)", largest, all.Peak)
	}
	free, limited := filepath.Join(t.TempDir(), "free"), filepath.Join(t.TempDir(), "limited")
	run := func(dir, maxMem string) int64 {
		out, code, rss := runChild(t, "emulate", "--demand", path, "--algo", "all", "--timeline", dir,
			"--max-memory", maxMem, "--progress", "off")
		if code != 0 {
			t.Fatalf("--max-memory %s: exit %d\n%s", maxMem, code, out)
		}
		return rss
	}
	run(free, "0")
	rss := run(limited, strconv.FormatInt(limit, 10)+"B")
	if rss > limit && !raceEnabled {
		t.Errorf("peak RSS %d bytes above the limit %d", rss, limit)
	}
	entries, err := os.ReadDir(free)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3*len(all.Runs)+1 {
		t.Fatalf("%d files for %d runs", len(entries), len(all.Runs))
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(free, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(limited, e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the run without a limit (%v)", e.Name(), err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(limited, experiment.TimelinesManifestName)); !strings.Contains(string(b), `"complete": true`) {
		t.Errorf("manifest not marked complete:\n%s", b)
	}
	t.Logf("%d runs: limit %d MiB (all kept together: %d MiB), peak RSS %d MiB", len(all.Runs), limit>>20, all.Peak>>20, rss>>20)
}
