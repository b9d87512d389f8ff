package cuda

import (
	_ "embed"
)

// kernelsPTX holds the spin and copy_sm kernels; see kernels.ptx.
//
//go:embed kernels.ptx
var kernelsPTX string

// Kernel names in KernelsPTX.
const (
	SpinKernel = "spin"
	CopyKernel = "copy_sm"
)

// KernelsPTX returns the PTX image as cuModuleLoadData wants it: NUL-terminated.
func KernelsPTX() []byte { return append([]byte(kernelsPTX), 0) }
