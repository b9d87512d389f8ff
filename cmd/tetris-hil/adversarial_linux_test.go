package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate"
	"github.com/tetris-hil/tetris-hil/calibrate/model"
)

// The adversarial tests run each hostile input through the real CLI in a child process whose
// address space is capped (envAddressLimit, applied by the child itself before anything else):
// a reader that regresses to reading without bound fails its row with an out-of-memory crash
// instead of taking the machine. Each row was, before the readers were bounded, a crash, a hang
// or a silent acceptance; now it must be one line, exit 2 (or the exit given), within
// hostileDeadline and under 1 GB of resident memory.

// envAddressLimit makes a child CLI process cap its own address space (RLIMIT_AS, bytes).
const envAddressLimit = "TETRIS_HIL_TEST_ADDRESS_LIMIT"

// hostileAddressLimit is the cap beyond what the child has mapped at start: 1 GiB, the memory
// budget a refusal must stay under.
const hostileAddressLimit = 1 << 30

// hostileDeadline is how long a refusal may take: promised within a second or two, with slack
// for a loaded two-core machine. A child still running at hostileKill is killed (a hang).
const (
	hostileDeadline = 5 * time.Second
	hostileKill     = 120 * time.Second
)

// raceSlowdown stretches the deadline under the race detector, which slows decoding a large
// file 10–20× (the 62,500-pair calibration: 0.4 s, 15 s under -race beside two busy loops; the
// scan it replaced took minutes even without -race).
var raceSlowdown = map[bool]time.Duration{false: 1, true: 12}[raceEnabled]

// The cap is counted from what the process has mapped when it applies it (the Go runtime's
// reservations, the test binary's threads: some hundreds of MiB of address space that hold
// little memory), so that it bounds what the command itself maps.
func init() {
	if v := os.Getenv(envAddressLimit); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			var mapped uint64
			if mapped, err = vmSize(); err == nil {
				n += mapped
				err = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n})
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "address limit:", err)
			os.Exit(3)
		}
	}
}

// vmSize is the process's mapped address space (VmSize), bytes.
func vmSize() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}

// hostile is one row: the arguments (built in a directory of its own), the exit status and a
// substring of the one line the CLI must print.
type hostile struct {
	name string
	args func(t *testing.T, dir string) []string
	code int
	want string
}

// runHostile runs each row in a child under the address limit and checks the promise.
func runHostile(t *testing.T, rows []hostile) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			args := r.args(t, dir)
			hwm := filepath.Join(t.TempDir(), "hwm")
			p := cliProcess(args...)
			p.Env = append(p.Env, envHWMFile+"="+hwm)
			if !raceEnabled { // the race detector reserves terabytes of address space
				// glibc (the test binary links it through cgo) reserves 64 MiB of address space per
				// thread for its malloc arenas: one arena keeps the cap about Go's memory.
				p.Env = append(p.Env, envAddressLimit+"="+strconv.Itoa(hostileAddressLimit), "MALLOC_ARENA_MAX=1")
			}
			var stdout, stderr bytes.Buffer
			p.Stdout, p.Stderr = &stdout, &stderr
			start := time.Now()
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- p.Wait() }()
			select {
			case <-done:
			case <-time.After(hostileKill):
				p.Process.Kill()
				<-done
				t.Fatalf("%v: still running after %v (a hang)", args, hostileKill)
			}
			took := time.Since(start)
			msg := strings.TrimSpace(strings.ReplaceAll(stderr.String(), dir+string(filepath.Separator), ""))
			code := p.ProcessState.ExitCode()
			t.Logf("exit %d in %v: %s", code, took.Round(time.Millisecond), msg)
			if ws, ok := p.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("killed by %v", ws.Signal())
			}
			if code != r.code || !strings.Contains(msg, r.want) {
				t.Fatalf("exit %d, want %d; stderr %q; want it to contain %q", code, r.code, msg, r.want)
			}
			if r.code == 2 && (strings.Count(msg, "\n") > 0 || !strings.HasPrefix(msg, "tetris-hil: ")) {
				t.Errorf("not one line of error: %q", msg)
			}
			if deadline := hostileDeadline * raceSlowdown; took > deadline {
				t.Errorf("took %v, more than %v", took, deadline)
			}
			if b, err := os.ReadFile(hwm); err == nil && !raceEnabled {
				kb, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if kb<<10 > 1e9 {
					t.Errorf("peak resident memory %d MiB, above 1 GB", kb>>10)
				}
			}
		})
	}
}

// sparse makes a file of size bytes that takes no disk (or skips where the file system can't).
func sparse(t *testing.T, path string, size int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	return path
}

func fifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAdversarialWiring(t *testing.T) {
	get := func(wiring string) []string { return []string{"switch", "get", "--fake", "--wiring", wiring} }
	runHostile(t, []hostile{
		{"/dev/zero", func(*testing.T, string) []string { return get("/dev/zero") }, 2,
			`wiring map: read /dev/zero: not a regular file (a character device)`},
		{"a FIFO", func(t *testing.T, dir string) []string { return get(fifo(t, filepath.Join(dir, "w.yaml"))) }, 2,
			`w.yaml: not a regular file (a FIFO)`},
		{"a 20 MB map, bounded before the YAML parser", func(t *testing.T, dir string) []string {
			return get(sparse(t, filepath.Join(dir, "w.yaml"), 20e6))
		}, 2, `w.yaml is 19.07MiB, above the limit of 1MiB for input of kind wiring (raise it with --max-input wiring=SIZE)`},
		{"ports: 2^30 (96 bytes)", func(t *testing.T, dir string) []string {
			return get(write(t, filepath.Join(dir, "w.yaml"), "version: 1\nports: 1073741824\nbackend: fake\nt_r: 1ms\nt_w: 1ms\n"))
		}, 2, `ports: 1073741824, want a power of two from 2 to 1048576`},
		{"ports: 2^20 and no switches: the list of missing switches is capped", func(t *testing.T, dir string) []string {
			return get(write(t, filepath.Join(dir, "w.yaml"), "version: 1\nports: 1048576\nbackend: fake\nt_r: 1ms\nt_w: 1ms\nswitches: []\n"))
		}, 2, `20447232 of the 20447232 switches of a 1048576-port fabric are not mapped: 0:0, 0:1, 0:2, 0:3, 0:4, 0:5, 0:6, 0:7 and 20447224 more`},
		{"--max-input moves the limit (here down)", func(t *testing.T, dir string) []string {
			return append(get(serialWiring), "--max-input", "wiring=1KiB")
		}, 2, `wiring-8x8-serial.yaml is 2.`},
	})
}

// bigCalibration writes a valid calibration of g GPUs with every ordered pair fitted.
func bigCalibration(t *testing.T, path string, g int) string {
	t.Helper()
	c := model.Calibration{Version: model.FormatVersion}
	for i := range g {
		c.Inventory.GPUs = append(c.Inventory.GPUs, model.GPU{Index: i, Name: "fake"})
	}
	for s := range g {
		for d := range g {
			if s != d {
				c.Pairs = append(c.Pairs, model.PairFit{Src: s, Dst: d, Alpha: 1e-6, Beta: 1e-10, R2: 1})
			}
		}
	}
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, path, string(b))
}

func TestAdversarialCalibration(t *testing.T) {
	emulate := func(cal string) []string {
		return []string{"emulate", "--matrix", "0", "--algo", "tetris", "--calibration", cal}
	}
	runHostile(t, []hostile{
		{"/dev/zero", func(*testing.T, string) []string { return emulate("/dev/zero") }, 2,
			`--calibration "/dev/zero": read /dev/zero: not a regular file (a character device)`},
		{"a FIFO", func(t *testing.T, dir string) []string { return emulate(fifo(t, filepath.Join(dir, "c.json"))) }, 2,
			`c.json: not a regular file (a FIFO)`},
		{"5 GiB sparse", func(t *testing.T, dir string) []string {
			return emulate(sparse(t, filepath.Join(dir, "c.json"), 5<<30))
		}, 2,
			`c.json is 5GiB, above the limit of 256MiB for input of kind calibration`},
		// 62,500 pairs took 29.8 s to index pair by pair (a scan per pair); indexed, well under a second.
		{"62,500 pairs (250 GPUs)", func(t *testing.T, dir string) []string {
			return emulate(bigCalibration(t, filepath.Join(dir, "c.json"), 250))
		}, 0, ""},
	})
}

func TestAdversarialDemand(t *testing.T) {
	show := func(d string) []string { return []string{"emulate", "--demand", d} }
	runHostile(t, []hostile{
		{"/dev/zero", func(*testing.T, string) []string { return show("/dev/zero") }, 2, `--demand: /dev/zero: not a regular file (a character device)`},
		{"a FIFO", func(t *testing.T, dir string) []string { return show(fifo(t, filepath.Join(dir, "d.json"))) }, 2, `d.json: not a regular file (a FIFO)`},
		{"2 GiB sparse", func(t *testing.T, dir string) []string { return show(sparse(t, filepath.Join(dir, "d.json"), 2<<30)) }, 2,
			`d.json is 2GiB, above the limit of 1GiB for input of kind demand`},
		{"trace show, 2 GiB sparse CSV", func(t *testing.T, dir string) []string {
			return []string{"trace", "show", sparse(t, filepath.Join(dir, "d.csv"), 2<<30)}
		}, 2, `d.csv is 2GiB, above the limit of 1GiB for input of kind demand`},
	})
}

// TestAdversarialTraceImport: every input of trace import that is not a demand matrix (a
// routing log, expert counts, a placement file) is read through its kind's limit and must be a
// regular file. Before, each was opened plainly: a FIFO hung, /dev/zero read on, and a file
// of any size was read whole.
func TestAdversarialTraceImport(t *testing.T) {
	routing := func(dir, in string, extra ...string) []string {
		return append(append([]string{"trace", "import", "--format", "routing-jsonl", "--gpus", "8", "--experts", "8", "--hidden", "4096"}, extra...),
			in, "-o", filepath.Join(dir, "out.json"))
	}
	counts := func(dir, in string) []string {
		return []string{"trace", "import", "--format", "expert-counts", "--model", "olmoe-1b-7b", "--gpus", "8", in, "-o", filepath.Join(dir, "out.json")}
	}
	placement := func(dir, p string) []string {
		return routing(dir, "../../examples/routing.jsonl", "--placement", p)
	}
	runHostile(t, []hostile{
		{"routing log /dev/zero", func(_ *testing.T, dir string) []string { return routing(dir, "/dev/zero") }, 2,
			`/dev/zero: not a regular file (a character device); input of kind routing is read whole`},
		{"routing log FIFO (hung)", func(t *testing.T, dir string) []string { return routing(dir, fifo(t, filepath.Join(dir, "r.jsonl"))) }, 2,
			`r.jsonl: not a regular file (a FIFO)`},
		{"routing log 2 GiB sparse", func(t *testing.T, dir string) []string {
			return routing(dir, sparse(t, filepath.Join(dir, "r.jsonl"), 2<<30))
		}, 2,
			`r.jsonl is 2GiB, above the limit of 1GiB for input of kind routing (raise it with --max-input routing=SIZE)`},
		{"routing log above a lowered limit", func(_ *testing.T, dir string) []string {
			return append(routing(dir, "../../examples/routing.jsonl"), "--max-input", "routing=1KiB")
		}, 2, `routing.jsonl is 30.84KiB, above the limit of 1KiB for input of kind routing`},
		{"expert counts /dev/zero", func(_ *testing.T, dir string) []string { return counts(dir, "/dev/zero") }, 2,
			`/dev/zero: not a regular file (a character device); input of kind expert-counts is read whole`},
		{"expert counts FIFO (hung)", func(t *testing.T, dir string) []string { return counts(dir, fifo(t, filepath.Join(dir, "c.json"))) }, 2,
			`c.json: not a regular file (a FIFO)`},
		{"expert counts 512 MiB sparse", func(t *testing.T, dir string) []string {
			return counts(dir, sparse(t, filepath.Join(dir, "c.json"), 512<<20))
		}, 2,
			`c.json is 512MiB, above the limit of 256MiB for input of kind expert-counts`},
		{"placement /dev/zero", func(_ *testing.T, dir string) []string { return placement(dir, "/dev/zero") }, 2,
			`--placement "/dev/zero": read /dev/zero: not a regular file (a character device); input of kind placement is read whole`},
		{"placement FIFO (hung)", func(t *testing.T, dir string) []string { return placement(dir, fifo(t, filepath.Join(dir, "p.json"))) }, 2,
			`p.json: not a regular file (a FIFO)`},
		{"placement 32 MiB sparse", func(t *testing.T, dir string) []string {
			return placement(dir, sparse(t, filepath.Join(dir, "p.json"), 32<<20))
		}, 2,
			`p.json is 32MiB, above the limit of 16MiB for input of kind placement`},
	})
}

// TestAdversarialResume interrupts a fake calibration to get a real partial file, then offers
// --resume a hostile version of it per row: each is refused naming the field, before measuring.
func TestAdversarialResume(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole) // the workers calibrate starts are this test binary
	base := t.TempDir()
	args := []string{"calibrate", "--fake", "--fake-gpus", "3", "--sizes", "4KiB..1GiB", "--per-octave", "1", "--reps", "5",
		"--start-margin", "100ms", "--progress", "off"}
	cut := filepath.Join(base, "cut.json")
	cmd := cliProcess(append(args, "-o", cut)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); !exists(cut + ".partial")(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no partial file: %s", out.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	b, err := os.ReadFile(cut + ".partial")
	if err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var good calibrate.Partial
	if err := json.Unmarshal(b, &good); err != nil || len(good.Steps) < 2 {
		t.Fatalf("partial: %v, %d steps", err, len(good.Steps))
	}
	resume := func(t *testing.T, dir string, edit func(p *calibrate.Partial)) []string {
		var p calibrate.Partial
		json.Unmarshal(b, &p)
		edit(&p)
		nb, _ := json.Marshal(&p)
		o := filepath.Join(dir, "cut.json")
		write(t, o+".partial", string(nb))
		return append(args, "-o", o, "--resume")
	}
	row := func(name, want string, edit func(p *calibrate.Partial)) hostile {
		return hostile{name, func(t *testing.T, dir string) []string { return resume(t, dir, edit) }, 2, want}
	}
	runHostile(t, []hostile{
		row("a negative time (silently dropped the pair)", "field steps[0].samples[0].median.seconds: -1, want a time from 0 to 3600 s",
			func(p *calibrate.Partial) { p.Steps[0].Samples[0].Median.Seconds = -1 }),
		row("samples of the wrong pair", "field steps[0].samples[0]: GPU 2 → GPU 1, but the plan's step copies GPU",
			func(p *calibrate.Partial) { p.Steps[0].Samples[0].Src, p.Steps[0].Samples[0].Dst = 2, 1 }),
		row("an empty step", "field steps[1].samples: 0 samples, want 1 (one per pair of the step)",
			func(p *calibrate.Partial) { p.Steps[1].Samples = []calibrate.Sample{} }),
		row("50 duplicates", "field steps[0].samples: 51 samples, want 1",
			func(p *calibrate.Partial) {
				for range 50 {
					p.Steps[0].Samples = append(p.Steps[0].Samples, p.Steps[0].Samples[0])
				}
			}),
		row("a 1e300 s median", "field steps[0].samples[0].median.seconds: 1e+300, want a time from 0 to 3600 s",
			func(p *calibrate.Partial) { p.Steps[0].Samples[0].Median.Seconds = 1e300 }),
		row("a spread out of order", "field steps[0].samples[0].median: min",
			func(p *calibrate.Partial) { m := &p.Steps[0].Samples[0].Median; m.Min = m.Max + 1 }),
		row("another size", "field steps[0].samples[0].median.bytes: 5, want 4096",
			func(p *calibrate.Partial) { p.Steps[0].Samples[0].Median.Bytes = 5 }),
		{"/dev/zero as the partial", func(t *testing.T, dir string) []string {
			o := filepath.Join(dir, "cut.json")
			if err := os.Symlink("/dev/zero", o+".partial"); err != nil {
				t.Fatal(err)
			}
			return append(args, "-o", o, "--resume")
		}, 2, "not a regular file (a character device)"},
	})
}

// TestAdversarialShard offers sweep merge a hostile version of a real shard file per row.
func TestAdversarialShard(t *testing.T) {
	base := t.TempDir()
	var shards [2]string
	for k := range shards {
		shards[k] = filepath.Join(base, fmt.Sprint("s", k))
		if out, code, err := cli(t, append(smallSweep(shards[k], 1), "--shard", fmt.Sprintf("%d/2", k))...); code != 0 {
			t.Fatalf("shard %d: exit %d: %v\n%s", k, code, err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(shards[0], "sweep-shard.json"))
	if err != nil {
		t.Fatal(err)
	}
	merge := func(t *testing.T, dir string, edit func(m map[string]any)) []string {
		var m map[string]any
		json.Unmarshal(b, &m)
		edit(m)
		nb, _ := json.Marshal(m)
		return []string{"sweep", "merge", write(t, filepath.Join(dir, "sweep-shard.json"), string(nb)), shards[1], "--out", filepath.Join(dir, "m")}
	}
	result := func(m map[string]any) map[string]any { return m["results"].([]any)[0].(map[string]any) }
	row := func(name, want string, edit func(m map[string]any)) hostile {
		return hostile{name, func(t *testing.T, dir string) []string { return merge(t, dir, edit) }, 2, want}
	}
	runHostile(t, []hostile{
		row(`"shards": -1 (a makeslice panic)`, "fields shard, shards, units: shard 0 of -1", func(m map[string]any) { m["shards"] = -1 }),
		row(`"shards": 1e12`, "fields shard, shards, units: shard 0 of 1000000000000", func(m map[string]any) { m["shards"] = 1e12 }),
		row(`"matrices": 1e11`, "field units", func(m map[string]any) { m["manifest"].(map[string]any)["matrices"] = 1e11 }),
		row("a negative completion", "results[0].completion_seconds[0] = -1 s", func(m map[string]any) {
			result(m)["completion_seconds"].([]any)[0] = -1
		}),
		row("a 1e300 completion", "results[0].completion_seconds[0] = 1e+300 s is above the limit", func(m map[string]any) {
			result(m)["completion_seconds"].([]any)[0] = 1e300
		}),
		row("a zero completion", "results[0].completion_seconds[0]: 0 s is below the unit's lower bound", func(m map[string]any) {
			result(m)["completion_seconds"].([]any)[0] = 0
		}),
		row("a negative bound", "results[0].lower_bound_seconds = -1 s", func(m map[string]any) { result(m)["lower_bound_seconds"] = -1 }),
		row("a bound above the completions", "is below the unit's lower bound of 1 s", func(m map[string]any) { result(m)["lower_bound_seconds"] = 1 }),
		{"/dev/zero as a shard", func(*testing.T, string) []string {
			return []string{"sweep", "merge", "/dev/zero", shards[1], "--out", filepath.Join(base, "m")}
		}, 2, "read /dev/zero: not a regular file (a character device)"},
	})
}

func TestAdversarialReport(t *testing.T) {
	run := func(t *testing.T, dir string) string {
		write(t, filepath.Join(dir, "commands.json"), "{}")
		return dir
	}
	report := func(d string) []string {
		return []string{"report", d, "-o", filepath.Join(os.TempDir(), "unused-"+strconv.Itoa(os.Getpid())+".html")}
	}
	runHostile(t, []hostile{
		{"report / (walked the file system, exit 0)", func(*testing.T, string) []string { return report("/") }, 2, "/ is not a run directory"},
		{"a FIFO named *.json (hung)", func(t *testing.T, dir string) []string {
			fifo(t, filepath.Join(run(t, dir), "x.json"))
			return report(dir)
		}, 2, "x.json: not a regular file (a FIFO)"},
		{"/dev/zero named *.json", func(t *testing.T, dir string) []string {
			if err := os.Symlink("/dev/zero", filepath.Join(run(t, dir), "z.json")); err != nil {
				t.Fatal(err)
			}
			return report(dir)
		}, 2, "z.json: not a regular file (a character device)"},
		{"a 5 GiB sparse PNG (read whole before the size check)", func(t *testing.T, dir string) []string {
			sparse(t, filepath.Join(run(t, dir), "big.png"), 5<<30)
			return report(dir)
		}, 2, "big.png is 5GiB, above the limit of 8MiB for input of kind image"},
	})
}

func TestAdversarialScheduleAndReplay(t *testing.T) {
	unsetCUDAVisible(t)
	xbar := strings.NewReplacer(`"n":2`, `"n":1048576`, `"ports":2`, `"ports":1048576`).Replace(crossbarSchedule)
	runHostile(t, []hostile{
		{"schedule /dev/zero (ran out of memory)", func(*testing.T, string) []string { return []string{"emulate", "--schedule", "/dev/zero"} }, 2,
			`--schedule "/dev/zero": read /dev/zero: not a regular file (a character device)`},
		{"schedule FIFO (hung)", func(t *testing.T, dir string) []string {
			return []string{"verify", fifo(t, filepath.Join(dir, "s.json"))}
		}, 2, `s.json: not a regular file (a FIFO)`},
		{"measured table /dev/zero", func(*testing.T, string) []string {
			return []string{"emulate", "--matrix", "0", "--measured", "/dev/zero"}
		}, 2,
			`--measured "/dev/zero": read /dev/zero: not a regular file`},
		// 1.38 GB and a 280 MB timeline of 2,097,152 per-port rows before.
		{"crossbar n = 2^20, one circuit, with --timeline", func(t *testing.T, dir string) []string {
			t.Cleanup(func() {
				st, err := os.Stat(filepath.Join(dir, "tl", "schedule-hand.timeline.json"))
				if err != nil || st.Size() > 64<<10 {
					t.Errorf("timeline: %v, %v bytes; want a small file", err, st)
				}
			})
			return []string{"emulate", "--schedule", write(t, filepath.Join(dir, "x.json"), xbar), "--timeline", filepath.Join(dir, "tl")}
		}, 0, ""},
		// 16.9 s, 520 MB and a 111 MB SVG of 1,048,576 rows before: now a row per port that
		// carries traffic, and the chart says so.
		{"crossbar n = 2^20, one circuit, with --gantt", func(t *testing.T, dir string) []string {
			t.Cleanup(func() {
				b, err := os.ReadFile(filepath.Join(dir, "g.svg"))
				if err != nil || len(b) > 64<<10 || !bytes.Contains(b, []byte("rows for the 1 of 1048576 transmitters that carry traffic")) {
					t.Errorf("gantt: %v, %d bytes; want a small chart that says it draws the transmitters carrying traffic", err, len(b))
				}
			})
			return []string{"emulate", "--schedule", write(t, filepath.Join(dir, "x.json"), xbar), "--gantt", filepath.Join(dir, "g.svg")}
		}, 0, ""},
		{"replay --fabric crossbar --wiring (sent nothing, said it drove switches)", func(t *testing.T, dir string) []string {
			return []string{"replay", "--fake", "--in-process", "--matrix", "0", "--fabric", "crossbar", "--wiring", serialWiring, "--out", filepath.Join(dir, "r")}
		}, 2, "is on the crossbar fabric, which has no switches to drive"},
	})
}

// The child really runs under the cap: a process that allocates past it dies, which is what
// makes the rows above fail rather than take the machine.
func TestAddressLimitBites(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector reserves terabytes of address space")
	}
	p := exec.Command(os.Args[0], "-test.run", "^TestAddressLimitChild$")
	p.Env = append(os.Environ(), envAddressLimit+"="+strconv.Itoa(hostileAddressLimit), "MALLOC_ARENA_MAX=1", "TETRIS_HIL_TEST_ALLOCATE=1")
	out, err := p.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "out of memory") {
		t.Fatalf("allocating 2 GiB under a 1 GiB address limit: %v\n%.500s", err, out)
	}
}

func TestAddressLimitChild(t *testing.T) {
	if os.Getenv("TETRIS_HIL_TEST_ALLOCATE") != "1" {
		t.Skip("the child of TestAddressLimitBites")
	}
	b := make([]byte, 2<<30)
	for i := range b {
		b[i] = 1
	}
	t.Log(len(b))
}
