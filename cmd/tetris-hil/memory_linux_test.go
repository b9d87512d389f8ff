package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
)

// denseTrace writes a one-layer trace on n GPUs where every GPU sends to every other (one
// expert per GPU) and returns its path.
func denseTrace(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dense.json")
	if out, code, err := cli(t, "trace", "gen", "--model", "mixtral-8x22b", "--gpus", strconv.Itoa(n), "--layers", "1",
		"--tokens-per-gpu", "512", "--expert-per-gpu", "-o", path); code != 0 {
		t.Fatalf("trace gen: exit %d: %v\n%s", code, err, out)
	}
	return path
}

// runChild runs the CLI as a separate process and returns its output, exit status and peak
// resident memory in bytes. The peak is the child's own VmHWM, which it writes at exit (see
// envHWMFile): its ru_maxrss would not do, because os/exec starts the child with vfork
// (CLONE_VM), so until it execs it shares this test process's memory and Linux carries that
// high-water mark into the child's ru_maxrss, which then measures the parent's tests too.
func runChild(t *testing.T, args ...string) (string, int, int64) {
	t.Helper()
	hwm := filepath.Join(t.TempDir(), "hwm")
	p := cliProcess(args...)
	p.Env = append(p.Env, envHWMFile+"="+hwm)
	var out bytes.Buffer
	p.Stdout, p.Stderr = &out, &out
	err := p.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	st := p.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("%v: killed by signal %v (out of memory?)\n%s", args, ws.Signal(), out.String())
	}
	b, err := os.ReadFile(hwm)
	if err != nil {
		t.Fatalf("%v: the child wrote no peak memory: %v\n%s", args, err, out.String())
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%v: peak memory %q: %v", args, b, err)
	}
	return out.String(), st.ExitCode(), kb << 10
}

// TestEmulateDense256RefusedUpFront feeds a dense 256-port matrix to emulate --algo all under a
// 128 MiB limit, in a child process: it is refused before anything is planned (one line naming
// the algorithms over the limit, n and their estimates; little memory used), not killed. (The
// decompositions, streamed round by round, need their slices: about 140 MiB each.)
func TestEmulateDense256RefusedUpFront(t *testing.T) {
	d := denseTrace(t, 256)
	out, code, rss := runChild(t, "emulate", "--demand", d, "--matrix", "0", "--algo", "all", "--max-memory", "128MiB")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (refused):\n%s", code, out)
	}
	line := strings.TrimSpace(out)
	for _, want := range []string{"refused before planning", "bvn on n = 256 needs about", "bvn-sinkhorn on n = 256",
		"above the limit of 128MiB", "--max-memory"} {
		if !strings.Contains(line, want) {
			t.Errorf("message lacks %q: %s", want, line)
		}
	}
	if strings.Count(line, "\n") != 0 {
		t.Errorf("refusal is not one line:\n%s", out)
	}
	if rss > 512<<20 && !raceEnabled {
		t.Errorf("the refused run used %d MiB: it planned something", rss>>20)
	}
	t.Logf("refused with peak RSS %d MiB: %s", rss>>20, line)
}

// TestEmulateEstimateCoversPeak: bvn-sinkhorn on a dense 64-port matrix (the worst case of the
// decomposition bound: a quarter of a million circuits) and Tetris, each given exactly its own
// estimate as --max-memory (so the estimate lets it through and the soft limit is the
// estimate's), finish with the child's peak resident set under that limit, with its timeline
// checked by round and with it kept for --timeline.
func TestEmulateEstimateCoversPeak(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory: peak RSS says nothing about the estimate")
	}
	path := denseTrace(t, 64)
	src := demandSource{path: path, matrix: 0, layer: -1, layout: "layers", maxPorts: 4096}
	named, err := src.load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{"bvn-sinkhorn", "tetris"} {
		for _, keep := range []bool{false, true} {
			est := experiment.EstimateMemory([]experiment.Matrix{named[0].matrix()}, experiment.Config{Algorithms: []string{algo}, KeepRuns: keep}, 1)
			args := []string{"emulate", "--demand", path, "--matrix", "0", "--algo", algo, "--max-memory", strconv.FormatInt(est.Peak, 10) + "B"}
			if keep {
				args = append(args, "--timeline", t.TempDir())
			}
			out, code, rss := runChild(t, args...)
			if code != 0 {
				t.Fatalf("%s (timeline kept: %v): exit %d\n%s", algo, keep, code, out)
			}
			if rss > est.Peak {
				t.Errorf("%s on a dense 64-port matrix (timeline kept: %v): peak RSS %d MiB above the estimate %d MiB", algo, keep, rss>>20, est.Peak>>20)
			}
			t.Logf("%s (timeline kept: %v): peak RSS %d MiB, estimate %d MiB (%d circuits at most)", algo, keep, rss>>20, est.Peak>>20, est.Runs[0].Circuits)
		}
	}
}

// TestEmulateDense256FinishesWithin3GB runs emulate --algo all --max-memory 3GB on two dense
// 256-port matrices, a dense trace and a random one (integers 1 … 2^24 off the diagonal: the
// Birkhoff–von Neumann decompositions' worst case, 16.6 M circuits), in a child process, and
// requires that it finish with a peak resident set under 3·10^9 bytes. About two minutes and
// 3 GB on two cores, so only with TETRIS_HIL_LARGE_TESTS=1.
func TestEmulateDense256FinishesWithin3GB(t *testing.T) {
	if os.Getenv("TETRIS_HIL_LARGE_TESTS") != "1" {
		t.Skip("set TETRIS_HIL_LARGE_TESTS=1 to run (about two minutes and 3 GB)")
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory")
	}
	random := filepath.Join(t.TempDir(), "random256.csv")
	var b strings.Builder
	rng := uint64(1)
	for i := range 256 {
		for j := range 256 {
			if j > 0 {
				b.WriteByte(',')
			}
			v := 0
			if i != j {
				rng = rng*6364136223846793005 + 1442695040888963407
				v = 1 + int(rng>>40)
			}
			b.WriteString(strconv.Itoa(v))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(random, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{denseTrace(t, 256), random} {
		out, code, rss := runChild(t, "emulate", "--demand", d, "--matrix", "0", "--algo", "all", "--max-memory", "3GB", "--progress", "off")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", filepath.Base(d), code, out)
		}
		if !strings.Contains(out, "bvn-sinkhorn") || !strings.Contains(out, "tetris+") {
			t.Fatalf("%s: not every algorithm reported:\n%s", filepath.Base(d), out)
		}
		if rss > 3e9 {
			t.Errorf("%s: peak RSS %d bytes, above 3 GB", filepath.Base(d), rss)
		}
		t.Logf("%s: finished, peak RSS %d MiB (%.3g bytes)", filepath.Base(d), rss>>20, float64(rss))
	}
}
