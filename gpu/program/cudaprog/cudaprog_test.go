package cudaprog

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Without a GPU, Open fails with cuda.ErrUnavailable and says how to replay without one.
func TestOpenWithoutGPU(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("a GPU driver is present")
	}
	if standin.Loaded(standin.CUDA) {
		t.Skip("the stand-in libcuda.so.1 is loaded into this process")
	}
	_, err := Open(Config{Device: transfer.Device{GPU: 0}})
	if !errors.Is(err, cuda.ErrUnavailable) || !strings.Contains(err.Error(), "--fake") {
		t.Fatalf("Open without a GPU: %v", err)
	}
}

// The embedded PTX declares the kernels the devices launch (delay and stamp on one GPU, sdelay
// and sstamp across worker processes), for the target the copy kernel
// of gpu/cuda uses, and is NUL-terminated for cuModuleLoadData.
func TestPTXImage(t *testing.T) {
	img := ptxImage()
	if img[len(img)-1] != 0 {
		t.Fatal("the PTX image is not NUL-terminated")
	}
	s := string(img)
	for _, want := range []string{".target sm_70", ".visible .entry delay(", ".visible .entry stamp(", ".visible .entry sdelay(", ".visible .entry sstamp(", "%globaltimer", "membar.sys"} {
		if !strings.Contains(s, want) {
			t.Errorf("program.ptx lacks %q", want)
		}
	}
	if strings.Count(s, "{") != strings.Count(s, "}") {
		t.Error("program.ptx has unbalanced braces")
	}
}

// Without a driver, binding cuMemHostRegister (for the shared memory of a replay across worker
// processes) fails with cuda.ErrUnavailable and says how to replay without a GPU.
func TestHostRegisterWithoutGPU(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("a GPU driver is present")
	}
	if standin.Loaded(standin.CUDA) {
		t.Skip("the stand-in libcuda.so.1 is loaded into this process")
	}
	_, err := loadHostRegister()
	if !errors.Is(err, cuda.ErrUnavailable) || !strings.Contains(err.Error(), "--fake") {
		t.Fatalf("loadHostRegister without a GPU: %v", err)
	}
}
