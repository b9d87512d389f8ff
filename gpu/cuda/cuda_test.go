package cuda

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestLoadWithoutDriver(t *testing.T) {
	if _, err := Load(); err == nil {
		t.Skip("libcuda.so.1 is present")
	}
	_, err := load("libcuda-does-not-exist.so.1")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libcuda-does-not-exist.so.1") || !strings.Contains(err.Error(), "--fake") {
		t.Errorf("err = %v, want ErrUnavailable naming the library and suggesting --fake", err)
	}
}

func TestABI(t *testing.T) {
	// CUipcMemHandle is passed by value: its size decides the calling convention.
	if n := unsafe.Sizeof(IpcMemHandle{}); n != 64 {
		t.Errorf("IpcMemHandle is %d bytes, want 64", n)
	}
	if n := unsafe.Sizeof(DevicePtr(0)); n != 8 {
		t.Errorf("DevicePtr is %d bytes, want 8 (CUdeviceptr is unsigned long long)", n)
	}
}

func TestGoString(t *testing.T) {
	if got := GoString([]byte("0000:18:00.0\x00\x00junk")); got != "0000:18:00.0" {
		t.Errorf("GoString = %q", got)
	}
	if got := GoString([]byte("abc")); got != "abc" {
		t.Errorf("GoString without NUL = %q", got)
	}
}

// TestPTXWellFormed is a lint of the hand-written PTX, which nothing compiles at build time: both
// entries exist with three 64-bit parameters, every register used is declared within its bound,
// and every branch target is a label of the same kernel.
func TestPTXWellFormed(t *testing.T) {
	src := kernelsPTX
	if !strings.HasPrefix(strings.TrimSpace(stripComments(src)), ".version") {
		t.Error("PTX does not start with .version")
	}
	entry := regexp.MustCompile(`(?s)\.visible \.entry (\w+)\(([^)]*)\)\s*\{(.*?)\n\}`)
	kernels := entry.FindAllStringSubmatch(src, -1)
	names := map[string]bool{}
	for _, k := range kernels {
		name, params, body := k[1], k[2], stripComments(k[3])
		names[name] = true
		if n := strings.Count(params, ".param .u64"); n != 3 {
			t.Errorf("%s: %d u64 parameters, want 3", name, n)
		}
		decl := map[string]int{}
		for _, m := range regexp.MustCompile(`\.reg \.\w+ %(\w+)<(\d+)>;`).FindAllStringSubmatch(body, -1) {
			decl[m[1]], _ = strconv.Atoi(m[2])
		}
		for _, m := range regexp.MustCompile(`%([a-z]+)(\d+)\b`).FindAllStringSubmatch(body, -1) {
			bound, ok := decl[m[1]]
			idx, _ := strconv.Atoi(m[2])
			if !ok || idx >= bound {
				t.Errorf("%s: register %%%s%s not declared (bound %d)", name, m[1], m[2], bound)
			}
		}
		labels := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^(\w+):`).FindAllStringSubmatch(body, -1) {
			labels[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`bra (\w+);`).FindAllStringSubmatch(body, -1) {
			if !labels[m[1]] {
				t.Errorf("%s: branch to unknown label %s", name, m[1])
			}
		}
		if !strings.Contains(body, "ret;") {
			t.Errorf("%s: no ret", name)
		}
	}
	if !names[SpinKernel] || !names[CopyKernel] || len(kernels) != 2 {
		t.Errorf("kernels %v, want %s and %s", names, SpinKernel, CopyKernel)
	}
	if img := KernelsPTX(); img[len(img)-1] != 0 {
		t.Error("KernelsPTX is not NUL-terminated")
	}
}

func stripComments(s string) string {
	return regexp.MustCompile(`//[^\n]*`).ReplaceAllString(s, "")
}
