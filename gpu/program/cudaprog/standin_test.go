package cudaprog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"

	// The receiving workers' engine, which exports the buffers other workers copy into.
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/cudaengine"
)

// roleEnv starts this test binary as a GPU worker: it runs RunShared on the job in the file
// named by its first argument, on the GPU its second names, and exits 0, 3 when the host
// aborted the run, 1 otherwise.
const roleEnv = "TETRIS_HIL_CUDAPROG_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) != "" {
		os.Exit(workerMain(os.Args[1], os.Args[2]))
	}
	os.Exit(m.Run())
}

func workerMain(path, gpu string) int {
	var g int
	b, err := os.ReadFile(path)
	var j shared.Job
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err == nil {
		_, err = fmt.Sscan(gpu, &g)
	}
	if err == nil {
		err = RunShared(context.Background(), transfer.Device{GPU: g, CUDAOrdinal: g}, j)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, shared.ErrAborted):
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// skew is the stand-in's clock skew: GPU d's %globaltimer is CLOCK_MONOTONIC + (d+1)·skew + 777.
const skew = int64(1000 * time.Second)

// gpuRun is a replay across GPU worker processes on the stand-in driver.
type gpuRun struct {
	m     *shared.Mem
	log   string
	cmds  []*exec.Cmd
	exits []chan error
	// engines export the buffers of copies across workers, one per receiving GPU, as the
	// receiving workers' engines do.
	engines map[int]transfer.Engine
	bufs    map[int][]int
}

// startGPUs creates the shared memory for p, exports a buffer on the receiver's GPU for every
// pair of endpoints on different workers (worker w on GPU w), and starts the workers.
func startGPUs(t *testing.T, p *program.Program, split [][]int, kind transfer.Kind, env ...string) *gpuRun {
	t.Helper()
	lib := standin.Build(t, standin.CUDA)
	dir := t.TempDir()
	r := &gpuRun{log: filepath.Join(dir, "cuda.log"), engines: map[int]transfer.Engine{}, bufs: map[int][]int{}}
	h := standin.Preload(t, standin.CUDA)
	standin.SetLog(t, standin.CUDA, h, r.log)
	t.Cleanup(func() { standin.SetLog(t, standin.CUDA, h, "") })
	d := shared.Dims{Endpoints: len(p.Endpoints), Circuits: p.Circuits, Signals: len(p.Signals), Workers: len(split)}
	m, err := shared.Create(filepath.Join(dir, "replay.shm"), d)
	if err != nil {
		t.Fatal(err)
	}
	r.m = m
	t.Cleanup(func() { m.Close() })
	workerOf := map[int]int{}
	for w, eps := range split {
		for _, e := range eps {
			workerOf[e] = w
		}
	}
	buffers := make([][]shared.Buffer, len(split))
	for _, k := range crossPairs(p, workerOf) {
		src, dst, n := k[0], k[1], k[2]
		g := workerOf[dst]
		if r.engines[g] == nil {
			eng, err := transfer.Open(context.Background(), "cuda", transfer.Config{Device: transfer.Device{GPU: g, CUDAOrdinal: g}})
			if err != nil {
				t.Fatal(err)
			}
			r.engines[g] = eng
		}
		id, handle, err := r.engines[g].Export(context.Background(), int64(n))
		if err != nil {
			t.Fatal(err)
		}
		r.bufs[g] = append(r.bufs[g], id)
		buffers[workerOf[src]] = append(buffers[workerOf[src]], shared.Buffer{Src: src, Dst: dst, Handle: handle})
	}
	durs := make([]int64, p.Circuits)
	for w, eps := range split {
		job := shared.Job{Path: m.Path, Dims: d, Program: p, Work: shared.Work{Worker: w, Endpoints: eps, Durations: durs,
			ArmTimeout: 20 * time.Second, ClockSamples: 8, Kind: kind, Buffers: buffers[w]}}
		r.start(t, dir, lib, job, w, env)
	}
	t.Cleanup(func() {
		for _, c := range r.cmds {
			_ = c.Process.Kill()
		}
	})
	return r
}

// crossPairs lists (src, dst, largest copy) for the pairs of p whose endpoints are on different
// workers.
func crossPairs(p *program.Program, workerOf map[int]int) [][3]int {
	size := map[[2]int]int{}
	var order [][2]int
	for e, steps := range p.Endpoints {
		for _, s := range steps {
			k := [2]int{e, int(s.Dst)}
			if workerOf[e] == workerOf[k[1]] || s.Bytes == 0 {
				continue
			}
			if _, ok := size[k]; !ok {
				order = append(order, k)
			}
			size[k] = max(size[k], int(s.Bytes))
		}
	}
	var out [][3]int
	for _, k := range order {
		out = append(out, [3]int{k[0], k[1], size[k]})
	}
	return out
}

func (r *gpuRun) start(t *testing.T, dir, lib string, job shared.Job, gpu int, env []string) {
	t.Helper()
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	jf := filepath.Join(dir, fmt.Sprintf("job%d.json", job.Work.Worker))
	if err := os.WriteFile(jf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], jf, fmt.Sprint(gpu))
	cmd.Env = append(os.Environ(), roleEnv+"=1", "LD_LIBRARY_PATH="+standin.Dir(lib), "STANDIN_CUDA_LOG="+r.log,
		fmt.Sprintf("STANDIN_CUDA_CLOCK_SKEW=%d", skew))
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		ch <- err
	}()
	r.cmds, r.exits = append(r.cmds, cmd), append(r.exits, ch)
}

func (r *gpuRun) alive() error {
	for w, ch := range r.exits {
		select {
		case err := <-ch:
			ch <- err
			if err != nil {
				return fmt.Errorf("worker process %d: %w", w, err)
			}
		default:
		}
	}
	return nil
}

// wait waits for the workers and returns their exit codes, then frees the exported buffers
// (after the importers have closed them, as the host of a replay does).
func (r *gpuRun) wait(t *testing.T) []int {
	t.Helper()
	codes := make([]int, len(r.cmds))
	for w, ch := range r.exits {
		select {
		case err := <-ch:
			ch <- err
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				codes[w] = ee.ExitCode()
				t.Logf("worker %d: %v", w, err)
			} else if err != nil {
				codes[w] = -1
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("worker process %d still running 20 s after the host returned", w)
		}
	}
	for g, eng := range r.engines {
		for _, id := range r.bufs[g] {
			if err := eng.Free(id); err != nil {
				t.Error(err)
			}
		}
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	}
	return codes
}

type parallel float64

func (a parallel) Command(t float64, _ int) (float64, float64) { return t, t + float64(a) }

// chain is the program of the shared package's tests: four endpoints whose dependencies cross
// the workers; endpoint e copies circuits e and 4+e to (e+1) mod 4; circuit 4+e waits for
// circuit (e+1) mod 4 and its own previous one, circuits 6 and 7 also for signal 0, requested
// when circuits 0 and 1 have ended. Copies are of 1–8 MB, lasting 20–160 µs on the stand-in.
func chain(batch bool) *program.Program {
	p := &program.Program{Circuits: 8, Batch: batch, Signals: []program.Signal{{Requires: []int32{0, 1}, After: -1, Changes: 1}}}
	for e := range int32(4) {
		first := program.Step{Circuit: e, Dst: (e + 1) % 4, Bytes: int64(e+1) << 20}
		second := program.Step{Circuit: 4 + e, Dst: (e + 1) % 4, Bytes: int64(e+5) << 20, After: []int32{e, (e + 1) % 4}}
		if e >= 2 {
			second.Signals = []int32{0}
		}
		p.Endpoints = append(p.Endpoints, []program.Step{first, second})
	}
	return p
}

// Two worker processes on GPUs 0 and 1 of the stand-in driver run the chain as stream programs
// over the shared file: the stamps keep the programs' semantics, are on CLOCK_MONOTONIC
// although each GPU's clock is off by its own thousands of seconds (each worker's offset,
// measured with the stamp kernel, is the stand-in's skew), the copies across workers go into
// the buffers the receivers exported, and every importer closes before the exporter frees.
func TestSharedOnStandIn(t *testing.T) {
	for _, kind := range []transfer.Kind{transfer.CE, transfer.SM} {
		t.Run(string(kind), func(t *testing.T) { testShared(t, kind) })
	}
}

func testShared(t *testing.T, kind transfer.Kind) {
	p := chain(true)
	r := startGPUs(t, p, [][]int{{0, 3}, {1, 2}}, kind)
	const alpha = 300e-6
	h := &shared.Host{Program: p, Station: parallel(alpha), Alive: r.alive, Timeout: 20 * time.Second, SpinOnly: true}
	t0 := transfer.Monotonic()
	st, err := h.Run(context.Background(), r.m)
	elapsed := (transfer.Monotonic() - t0).Seconds()
	if err != nil {
		r.wait(t)
		t.Fatal(err)
	}
	if codes := r.wait(t); fmt.Sprint(codes) != "[0 0]" {
		t.Fatalf("worker exit codes %v", codes)
	}
	for _, o := range h.Offsets {
		want := -(int64(o.Worker)+1)*skew - 777
		if d := o.OffsetNS - want; d < -o.UncertaintyNS || d > o.UncertaintyNS || o.Samples != 8 {
			t.Errorf("worker %d: offset %d ns ± %d ns (%d samples); GPU %d's clock is off by %d ns", o.Worker, o.OffsetNS, o.UncertaintyNS, o.Samples, o.Worker, want)
		}
	}
	for c := range p.Circuits {
		if !(st.Start[c] >= 0 && st.End[c] <= elapsed) {
			t.Errorf("circuit %d ran %g..%g s from the start, outside the run's %g s: a stamp not on CLOCK_MONOTONIC", c, st.Start[c], st.End[c], elapsed)
		}
	}
	checkSemantics(t, p, st, alpha)
	lines := standin.Log(t, r.log)
	bad, freed := standin.IPCTeardown(lines)
	if len(bad) > 0 || freed != 2 {
		t.Errorf("teardown: %d exported buffers freed (want 2), violations %q", freed, bad)
	}
	checkCopies(t, lines, kind, 8)
}

// checkSemantics checks the stamps against the programs' definition: a circuit's target is the
// latest end of its waits (and the start), it starts at or after its target and its endpoint's
// previous end, and its copy lasts at least the stand-in's 2000 ns + bytes/50.
func checkSemantics(t *testing.T, p *program.Program, st *program.Stamps, alpha float64) {
	t.Helper()
	for _, steps := range p.Endpoints {
		prevEnd := 0.0
		for _, s := range steps {
			c := s.Circuit
			want := 0.0
			for _, a := range s.After {
				want = max(want, st.End[a])
			}
			for _, g := range s.Signals {
				want = max(want, st.Commands[st.CommandOf[g]].End)
			}
			if math.Abs(st.Target[c]-want) > 2e-9 {
				t.Errorf("circuit %d: target %.9f s, its waits ended at %.9f s", c, st.Target[c], want)
			}
			if st.Start[c] < st.Target[c] || st.Start[c] < prevEnd {
				t.Errorf("circuit %d starts at %.9f s, before its target %.9f s or its endpoint's previous end %.9f s", c, st.Start[c], st.Target[c], prevEnd)
			}
			if d, min := st.End[c]-st.Start[c], (2000+float64(s.Bytes)/50)*1e-9; d < min-1e-9 {
				t.Errorf("circuit %d copied %d bytes in %g s, less than the stand-in's %g s", c, s.Bytes, d, min)
			}
			prevEnd = st.End[c]
		}
	}
	for _, cmd := range st.Commands {
		if math.Abs(cmd.End-cmd.Start-alpha) > 1e-9 {
			t.Errorf("command %+v does not last α_r = %g s", cmd, alpha)
		}
	}
}

var (
	ipcOpened = regexp.MustCompile(`^pid=(\d+) .*cuIpcOpenMemHandle_v2\(.*\) ctx \d+ -> (0x[0-9a-f]+)$`)
	ceCopy    = regexp.MustCompile(`^pid=(\d+) .*cuMemcpyDtoDAsync_v2\((0x[0-9a-f]+), `)
	smCopy    = regexp.MustCompile(`^pid=(\d+) .*cuLaunchKernel\(copy_sm, .* args (0x[0-9a-f]+) `)
)

// checkCopies counts the copies in the stand-in's log (want of them) and checks that those to
// another worker's endpoint (one per pair here) went into the imported buffer.
func checkCopies(t *testing.T, lines []string, kind transfer.Kind, want int) {
	t.Helper()
	imported := map[string]bool{}
	for _, l := range lines {
		if m := ipcOpened.FindStringSubmatch(l); m != nil {
			imported[m[1]+" "+m[2]] = true
		}
	}
	re := ceCopy
	if kind == transfer.SM {
		re = smCopy
	}
	copies, into := 0, 0
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			copies++
			if imported[m[1]+" "+m[2]] {
				into++
			}
		}
	}
	// The chain's cross-worker pairs (0→1 and 2→3) carry two copies each.
	if copies != want || len(imported) != 2 || into != 4 {
		t.Errorf("%d %s copies (want %d), %d buffers imported (want 2), %d copies into them (want 4)", copies, kind, want, len(imported), into)
	}
}

// A program that can never finish is reported as a deadlock by the host, which sees where each
// GPU's endpoints are from the words the stamp kernel writes; both workers are aborted, release
// their streams' waits and tear down.
func TestSharedDeadlockOnStandIn(t *testing.T) {
	p := &program.Program{Circuits: 3, Endpoints: [][]program.Step{
		{{Circuit: 0, Dst: 1, Bytes: 4096}, {Circuit: 1, Dst: 1, Bytes: 4096, After: []int32{2}}},
		{{Circuit: 2, Dst: 0, Bytes: 4096, After: []int32{1}}},
	}}
	r := startGPUs(t, p, [][]int{{0}, {1}}, transfer.CE)
	t0 := time.Now()
	_, err := (&shared.Host{Program: p, Station: parallel(1e-6), Alive: r.alive, Timeout: 30 * time.Second, SpinOnly: true}).Run(context.Background(), r.m)
	if !errors.Is(err, shared.ErrDeadlock) || !strings.Contains(err.Error(), "endpoint 1") {
		t.Fatalf("Run: %v, want a deadlock at endpoint 1", err)
	}
	if time.Since(t0) > 10*time.Second {
		t.Errorf("the deadlock took %v to find", time.Since(t0))
	}
	if codes := r.wait(t); fmt.Sprint(codes) != "[3 3]" {
		t.Errorf("worker exit codes %v, want both aborted (3)", codes)
	}
	bad, _ := standin.IPCTeardown(standin.Log(t, r.log))
	if len(bad) > 0 {
		t.Errorf("teardown: %q", bad)
	}
}

// The one-GPU device (every endpoint a stream of GPU 0, in this process) runs the chain on the
// stand-in driver with the programs' semantics, every stamp from GPU 0's own clock, relative to
// the start it chose on that clock.
func TestExecuteOnStandIn(t *testing.T) {
	for _, kind := range []transfer.Kind{transfer.CE, transfer.SM} {
		t.Run(string(kind), func(t *testing.T) {
			standin.Preload(t, standin.CUDA)
			g, err := Open(Config{Device: transfer.Device{GPU: 0}, Kind: kind, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			p := chain(false)
			const alpha = 300e-6
			t0 := time.Now()
			st, err := g.Execute(context.Background(), p, parallel(alpha))
			if err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(t0).Seconds()
			for c := range p.Circuits {
				if !(st.Start[c] >= 0 && st.End[c] <= elapsed) {
					t.Errorf("circuit %d ran %g..%g s from the start, outside the run's %g s", c, st.Start[c], st.End[c], elapsed)
				}
			}
			checkSemantics(t, p, st, alpha)
		})
	}
}

// Cancelling the host mid-run, while circuits 6 and 7 wait for a reconfiguration that lasts
// seconds, aborts both workers: each releases its streams' waits, its streams run out, and it
// tears down (importers closing before the exporters free) and exits aborted, promptly.
func TestSharedCancelOnStandIn(t *testing.T) {
	p := chain(true)
	r := startGPUs(t, p, [][]int{{0, 3}, {1, 2}}, transfer.CE)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := (&shared.Host{Program: p, Station: parallel(10), Alive: r.alive, Timeout: 30 * time.Second, SpinOnly: true}).Run(ctx, r.m)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v, want the context's error", err)
	}
	if codes := r.wait(t); fmt.Sprint(codes) != "[3 3]" {
		t.Errorf("worker exit codes %v, want both aborted (3)", codes)
	}
	if d := time.Since(t0); d > 8*time.Second {
		t.Errorf("the workers took %v to stop", d)
	}
	bad, freed := standin.IPCTeardown(standin.Log(t, r.log))
	if len(bad) > 0 || freed != 2 {
		t.Errorf("teardown: %d exported buffers freed (want 2), violations %q", freed, bad)
	}
}

// Where a worker cannot open a buffer another exported (CUDA IPC refused, as in some
// containers) it fails before arming, naming the pair, and the host stops with it.
func TestSharedImportFailsOnStandIn(t *testing.T) {
	p := chain(true)
	r := startGPUs(t, p, [][]int{{0, 3}, {1, 2}}, transfer.CE, "STANDIN_CUDA_IPC_OPEN_FAIL=205")
	_, err := (&shared.Host{Program: p, Station: parallel(1e-3), Alive: r.alive, Timeout: 30 * time.Second, SpinOnly: true}).Run(context.Background(), r.m)
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("Run: %v, want a failed worker", err)
	}
	codes := r.wait(t)
	for w, c := range codes {
		if c != 1 {
			t.Errorf("worker %d exited %d, want 1 (failed)", w, c)
		}
	}
	for w, ch := range r.exits {
		werr := <-ch
		want := [][2]int{{0, 1}, {2, 3}}[w]
		if werr == nil || !strings.Contains(werr.Error(), fmt.Sprintf("importing the buffer for %d→%d", want[0], want[1])) ||
			!strings.Contains(werr.Error(), "CUDA_ERROR_MAP_FAILED") {
			t.Errorf("worker %d: %v, want its import of %d→%d refused", w, werr, want[0], want[1])
		}
	}
}

// Cancelling a one-GPU run while circuits 6 and 7 wait for a reconfiguration that lasts ten
// seconds stops it promptly: the host sets the run's abort word, which a delay kernel spinning
// towards a target more than 100 µs ahead reads and gives up on, so that the streams run out and
// the device can be synchronised and freed long before the target.
func TestExecuteCancelOnStandIn(t *testing.T) {
	standin.Preload(t, standin.CUDA)
	g, err := Open(Config{Device: transfer.Device{GPU: 0}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = g.Execute(ctx, chain(false), parallel(10))
	stopped := time.Since(t0)
	t.Logf("cancelled after 300ms; Execute returned after %v", stopped)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Execute: %v, want the context's error", err)
	}
	if stopped > 3*time.Second {
		t.Errorf("Execute took %v to stop after its context was cancelled at 300ms: the delay kernels spun on towards the 10 s reconfiguration", stopped)
	}
}

// runSharedHere runs p as one worker (all its endpoints, GPU 0) of a replay across worker
// processes, but in this process: RunShared beside the host, on a shared file of its own.
func runSharedHere(t *testing.T, p *program.Program, w shared.Work) {
	t.Helper()
	d := shared.Dims{Endpoints: len(p.Endpoints), Circuits: p.Circuits, Signals: len(p.Signals), Workers: 1}
	m, err := shared.Create(filepath.Join(t.TempDir(), "replay.shm"), d)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	done := make(chan error, 1)
	go func() {
		done <- RunShared(context.Background(), transfer.Device{GPU: 0}, shared.Job{Path: m.Path, Dims: d, Program: p, Work: w})
	}()
	_, herr := (&shared.Host{Program: p, Station: parallel(300e-6), Timeout: 20 * time.Second, SpinOnly: true}).Run(context.Background(), m)
	if err := errors.Join(herr, <-done); err != nil {
		t.Fatal(err)
	}
}

// A worker runs the jobs of one replay (one per algorithm) on one opened GPU: the context and
// the JIT-compiled modules are kept from one job to the next, and the clock offset is measured
// once while it is younger than the staleness bound (an hour here, so that the three jobs'
// pace does not matter); with a bound of 1 ns every job re-probes.
func TestSharedReusesGPUOnStandIn(t *testing.T) {
	h := standin.Preload(t, standin.CUDA)
	for _, tc := range []struct {
		maxAge        time.Duration
		loads, probes int
	}{{time.Hour, 2, 8}, {time.Nanosecond, 2, 3 * 8}} {
		t.Run(fmt.Sprint(tc.maxAge), func(t *testing.T) {
			ReleaseShared() // what an earlier test left open
			log := filepath.Join(t.TempDir(), "cuda.log")
			standin.SetLog(t, standin.CUDA, h, log)
			defer standin.SetLog(t, standin.CUDA, h, "")
			p := chain(true)
			for range 3 {
				runSharedHere(t, p, shared.Work{Worker: 0, Endpoints: []int{0, 1, 2, 3}, Durations: make([]int64, p.Circuits),
					ArmTimeout: 20 * time.Second, ClockSamples: 8, ClockMaxAge: tc.maxAge})
			}
			if err := ReleaseShared(); err != nil {
				t.Fatal(err)
			}
			loads, probes, releases := 0, 0, 0
			for _, l := range standin.Log(t, log) {
				switch {
				case strings.Contains(l, "cuModuleLoadData("):
					loads++
				case strings.Contains(l, "cuLaunchKernel(stamp,"):
					probes++
				case strings.Contains(l, "cuDevicePrimaryCtxRelease"):
					releases++
				}
			}
			t.Logf("3 jobs: %d module loads, %d clock probes, %d context releases", loads, probes, releases)
			if loads != tc.loads || probes != tc.probes || releases != 1 {
				t.Errorf("3 jobs made %d module loads, %d clock probes and %d context releases, want %d, %d and 1",
					loads, probes, releases, tc.loads, tc.probes)
			}
		})
	}
}
