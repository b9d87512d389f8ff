package nv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// The structs are passed to NVML by pointer, so their layout must be nvml.h's.
func TestLayouts(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"nvmlPciInfo_t", unsafe.Sizeof(PciInfo{}), 16 + 5*4 + 32},
		{"nvmlPciInfo_t.busId offset", unsafe.Offsetof(PciInfo{}.BusId), 36},
		{"nvmlMemory_t", unsafe.Sizeof(Memory{}), 24},
		{"nvmlTemperature_v1_t", unsafe.Sizeof(Temperature{}), 12},
		{"nvmlTemperature_v1", uintptr(Temperature_v1), 12 | 1<<24},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, nvml.h has %d", c.name, c.got, c.want)
		}
	}
}

func TestReturnString(t *testing.T) {
	for _, c := range []struct {
		r    Return
		want string
	}{
		{SUCCESS, "SUCCESS"},
		{ERROR_NO_PERMISSION, "ERROR_NO_PERMISSION"},
		{ERROR_UNKNOWN, "ERROR_UNKNOWN"},
		{Return(29), "ERROR_INVALID_STATE"},
		{Return(30), "ERROR_RESET_TYPE_NOT_SUPPORTED"}, // nvml.h of CUDA 13.3
		{Return(77), "unknown return value: 77"},
	} {
		if got := c.r.Error(); got != c.want {
			t.Errorf("Return(%d) = %q, want %q", int32(c.r), got, c.want)
		}
	}
}

// Without the driver's library, Init answers LIBRARY_NOT_FOUND (what the caller turns into
// "run with --fake"), and every later call answers FUNCTION_NOT_FOUND rather than crashing.
func TestInitWithoutLibrary(t *testing.T) {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		if _, err := os.Stat(filepath.Join(dir, libName)); err == nil {
			t.Skipf("%s is installed here: the missing-library path cannot be tested", libName)
		}
	}
	// By another name: a test of this package may have loaded the stand-in under libName.
	l := NewAt("libnvidia-ml-absent.so.1")
	if ret := l.Init(); ret != ERROR_LIBRARY_NOT_FOUND {
		t.Fatalf("Init without %s: %v, want ERROR_LIBRARY_NOT_FOUND", libName, ret)
	}
	if _, ret := l.DeviceGetCount(); ret != ERROR_FUNCTION_NOT_FOUND {
		t.Errorf("DeviceGetCount after a failed Init: %v, want ERROR_FUNCTION_NOT_FOUND", ret)
	}
}

// The binary's dependencies compile no C of their own beyond the Go toolchain's and purego's
// trampolines: a first build prints no compiler warnings (go-nvml's cgo wrappers printed ~150),
// and CGO_ENABLED=0 builds work.
func TestNoCgoDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}",
		"github.com/tetris-hil/tetris-hil/cmd/tetris-hil").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{"runtime/cgo": true, "net": true, "os/user": true,
		"github.com/ebitengine/purego/internal/cgo": true}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("%s compiles C (cgo): a first build may print its compiler's warnings, and CGO_ENABLED=0 builds lose it", p)
		}
	}
}
