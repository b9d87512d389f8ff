// Package standin builds and loads stand-ins for the NVIDIA driver's libraries, for tests: small
// C programs (testdata/fakenvml.c, testdata/fakecuda.c) with NVML's and CUDA's prototypes that
// play a made-up machine with recognisable values and log every call, so that the real purego
// bindings, and everything above them, run on a machine without a GPU. They are compiled with the
// system C compiler ($CC, else gcc or cc); a test skips, saying so, where there is none.
//
// A library loaded by path with its driver's soname answers every later dlopen of that soname in
// the process: after Preload, nvml.Open and cuda.Load bind the stand-in as if it were the driver.
// Child processes (workers) find it through LD_LIBRARY_PATH=Dir.
package standin

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

//go:embed testdata/fakenvml.c
var nvmlSource []byte

//go:embed testdata/fakecuda.c
var cudaSource []byte

// Lib names a stand-in and the driver library it stands in for.
type Lib struct {
	Soname string
	source []byte
	name   string
}

// The stand-ins.
var (
	NVML = Lib{Soname: "libnvidia-ml.so.1", source: nvmlSource, name: "fakenvml.c"}
	CUDA = Lib{Soname: "libcuda.so.1", source: cudaSource, name: "fakecuda.c"}
)

// Compiler is the C compiler to build with, or "" where there is none.
func Compiler() string {
	for _, c := range []string{os.Getenv("CC"), "gcc", "cc"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

var (
	buildMu sync.Mutex
	built   = map[string]string{} // lib name and flags -> directory
)

// Build compiles lib with the extra compiler flags into a directory of its own (once per process
// for each lib and flags) and returns the path of the library, named by its soname. It skips t
// where there is no C compiler and fails it where the compiler does.
func Build(t testing.TB, lib Lib, flags ...string) string {
	t.Helper()
	cc := Compiler()
	if cc == "" {
		t.Skip("no C compiler (set CC, or install gcc): the stand-in NVIDIA libraries cannot be built")
	}
	key := lib.name + " " + strings.Join(flags, " ")
	buildMu.Lock()
	defer buildMu.Unlock()
	if dir, ok := built[key]; ok {
		return filepath.Join(dir, lib.Soname)
	}
	dir, err := os.MkdirTemp("", "standin-")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, lib.name)
	if err := os.WriteFile(src, lib.source, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, lib.Soname)
	args := append([]string{"-O1", "-Wall", "-shared", "-fPIC", "-pthread", "-o", out,
		"-Wl,-soname," + lib.Soname}, flags...)
	args = append(args, src, "-lrt")
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in %s: %s %s: %v\n%s", lib.Soname, cc, strings.Join(args, " "), err, b)
	}
	built[key] = dir
	return out
}

var (
	loadMu sync.Mutex
	loaded = map[string]uintptr{} // soname -> handle
	paths  = map[string]string{}  // soname -> path loaded
)

// Preload builds lib (no extra flags) and loads it into this process under its soname, so that
// the bindings' own dlopen of the soname finds it. It returns the library's handle, for Set.
// Once loaded, a stand-in stays for the life of the process.
func Preload(t testing.TB, lib Lib) uintptr {
	t.Helper()
	path := Build(t, lib)
	loadMu.Lock()
	defer loadMu.Unlock()
	if h, ok := loaded[lib.Soname]; ok {
		return h
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatalf("loading the stand-in %s: %v", path, err)
	}
	loaded[lib.Soname], paths[lib.Soname] = h, path
	return h
}

// Dir is the directory of a built stand-in: what LD_LIBRARY_PATH of a child process names.
func Dir(path string) string { return filepath.Dir(path) }

// Set changes one of a loaded stand-in's knobs (see the C source: standin_nvml_set,
// standin_cuda_set) for this process.
func Set(t testing.TB, lib Lib, h uintptr, knob string, v int64) {
	t.Helper()
	var set func(knob string, v int64) int32
	purego.RegisterLibFunc(&set, h, setter(lib))
	if set(knob, v) != 0 {
		t.Fatalf("%s has no knob %q", lib.Soname, knob)
	}
}

// SetLog points a loaded stand-in's log at path ("" stops it) for this process.
func SetLog(t testing.TB, lib Lib, h uintptr, path string) {
	t.Helper()
	var set func(path string)
	purego.RegisterLibFunc(&set, h, setter(lib)+"_log")
	set(path)
}

func setter(lib Lib) string {
	if lib.Soname == NVML.Soname {
		return "standin_nvml_set"
	}
	return "standin_cuda_set"
}

// Log reads a stand-in's log file: one call a line.
func Log(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// String names a stand-in.
func (l Lib) String() string { return fmt.Sprintf("stand-in %s", l.Soname) }

// Loaded reports whether Preload has loaded lib into this process (tests of a missing driver
// skip then).
func Loaded(lib Lib) bool {
	loadMu.Lock()
	defer loadMu.Unlock()
	_, ok := loaded[lib.Soname]
	return ok
}

var (
	ipcOpen  = regexp.MustCompile(`cuIpcOpenMemHandle_v2\(0x[0-9a-f]+, (\S+), \d+\) ctx \d+ -> 0x`)
	ipcClose = regexp.MustCompile(`cuIpcCloseMemHandle\(0x[0-9a-f]+\) (\S+) -> 0`)
	memFree  = regexp.MustCompile(`cuMemFree_v2\(0x[0-9a-f]+\) (\S+) ctx \d+ -> 0`)
)

// IPCTeardown reads a stand-in libcuda.so.1's log (of every process) and reports each exported
// buffer its exporter freed while an importer still had it open, which cuda.h leaves undefined,
// and how many exported-and-opened buffers were freed in all (0: the log checked nothing).
func IPCTeardown(lines []string) (violations []string, freed int) {
	opened, closed := map[string]int{}, map[string]int{}
	for _, l := range lines {
		if m := ipcOpen.FindStringSubmatch(l); m != nil {
			opened[m[1]]++
		}
		if m := ipcClose.FindStringSubmatch(l); m != nil {
			closed[m[1]]++
		}
		if m := memFree.FindStringSubmatch(l); m != nil && opened[m[1]] > 0 {
			freed++
			if closed[m[1]] < opened[m[1]] {
				violations = append(violations, fmt.Sprintf("buffer %s freed by its exporter while %d of its %d importers had it open: %s",
					m[1], opened[m[1]]-closed[m[1]], opened[m[1]], l))
			}
		}
	}
	return violations, freed
}
