package cudaprog

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
)

// memOps are the stream memory operations gpu/cuda does not bind: a stream waits in its
// front end, without a kernel, until a 32-bit word in memory reaches a value.
type memOps struct {
	// StreamWaitValue32 is cuStreamWaitValue32(stream, addr, value, flags).
	StreamWaitValue32 func(s cuda.Stream, addr cuda.DevicePtr, value uint32, flags uint32) cuda.Result
}

// waitValueGEQ is CU_STREAM_WAIT_VALUE_GEQ: wait until *addr ≥ value (cyclically).
const waitValueGEQ = 0x0

var (
	opsOnce sync.Once
	ops     *memOps
	opsErr  error
)

// loadMemOps binds the memory operations from the driver library, once per process.
func loadMemOps() (*memOps, error) {
	opsOnce.Do(func() {
		lib, err := purego.Dlopen(cuda.Library, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			opsErr = fmt.Errorf("%w: %s not found (%v): run with --fake to replay on the fake device", cuda.ErrUnavailable, cuda.Library, err)
			return
		}
		m := &memOps{}
		var sym uintptr
		for _, name := range []string{"cuStreamWaitValue32_v2", "cuStreamWaitValue32"} {
			if sym, err = purego.Dlsym(lib, name); err == nil && sym != 0 {
				break
			}
		}
		if sym == 0 {
			opsErr = fmt.Errorf("%s has no cuStreamWaitValue32: the NVIDIA driver is too old for a compiled replay (CUDA 11.7 or later); run with --fake", cuda.Library)
			return
		}
		purego.RegisterFunc(&m.StreamWaitValue32, sym)
		ops = m
	})
	return ops, opsErr
}

// programPTX holds the delay and stamp kernels; see program.ptx.
//
//go:embed program.ptx
var programPTX string

// ptxImage is the PTX as cuModuleLoadData wants it: NUL-terminated.
func ptxImage() []byte { return append([]byte(programPTX), 0) }
