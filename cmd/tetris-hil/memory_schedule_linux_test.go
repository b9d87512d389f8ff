package main

import (
	"path/filepath"
	"testing"
)

// TestScheduleDense512WithinMemory plans Tetris on a dense 512-port matrix (261 332 circuits) in
// a child process and writes its 250 MB schedule file (to /dev/null: the same streamed writer)
// within 600 MB of peak resident memory; encoding the file whole took it to 1.25 GB.
func TestScheduleDense512WithinMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 512 ports (seconds)")
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory: peak RSS says nothing about the schedule's")
	}
	// 2048 tokens per GPU, each to 8 of 512 experts: nearly every pair carries traffic.
	d := filepath.Join(t.TempDir(), "dense512.json")
	if out, code, err := cli(t, "trace", "gen", "--model", "custom", "--hidden", "4096", "--experts", "512",
		"--top-k", "8", "--gpus", "512", "--layers", "1", "-o", d); code != 0 {
		t.Fatalf("trace gen: exit %d: %v\n%s", code, err, out)
	}
	out, code, rss := runChild(t, "schedule", "--algo", "tetris", "--demand", d, "--matrix", "0",
		"--bandwidth", "800Gbps", "--reconfig", "10us", "-o", "/dev/null")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if rss > 600<<20 {
		t.Errorf("peak RSS %d MiB, want at most 600 MiB", rss>>20)
	}
	t.Logf("peak RSS %d MiB", rss>>20)
}
