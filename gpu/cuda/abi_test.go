package cuda

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// cNames maps each constant of cuda.go to its cuda.h name.
var cNames = map[string]string{
	"Success": "CUDA_SUCCESS", "ErrorNoDevice": "CUDA_ERROR_NO_DEVICE",
	"ErrorPeerAccessEnabled": "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "ErrorNotSupported": "CUDA_ERROR_NOT_SUPPORTED",
	"ErrorInvalidValue": "CUDA_ERROR_INVALID_VALUE", "ErrorNotInitialized": "CUDA_ERROR_NOT_INITIALIZED",
	"ErrorSystemDriverMismatch": "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "ErrorInvalidContext": "CUDA_ERROR_INVALID_CONTEXT",
	"ErrorMapFailed": "CUDA_ERROR_MAP_FAILED", "ErrorPeerAccessUnsupport": "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	"ErrorJitCompilerNotFound": "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "ErrorOperatingSystem": "CUDA_ERROR_OPERATING_SYSTEM",
	"ErrorInvalidHandle": "CUDA_ERROR_INVALID_HANDLE", "ErrorTooManyPeers": "CUDA_ERROR_TOO_MANY_PEERS",
	"StreamNonBlocking": "CU_STREAM_NON_BLOCKING", "EventDefault": "CU_EVENT_DEFAULT",
	"MemHostAllocPortable": "CU_MEMHOSTALLOC_PORTABLE", "MemHostAllocDeviceMap": "CU_MEMHOSTALLOC_DEVICEMAP",
	"IpcMemLazyEnablePeerAcces": "CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS",
	"AttrMultiprocessorCount":   "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
	"JitInfoLogBuffer":          "CU_JIT_INFO_LOG_BUFFER", "JitInfoLogBufferBytes": "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES",
	"JitErrorLogBuffer": "CU_JIT_ERROR_LOG_BUFFER", "JitErrorLogBufferBytes": "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES",
}

var goValues = map[string]int64{
	"Success": int64(Success), "ErrorNoDevice": int64(ErrorNoDevice), "ErrorPeerAccessEnabled": int64(ErrorPeerAccessEnabled),
	"ErrorNotSupported": int64(ErrorNotSupported), "ErrorInvalidValue": int64(ErrorInvalidValue),
	"ErrorNotInitialized": int64(ErrorNotInitialized), "ErrorSystemDriverMismatch": int64(ErrorSystemDriverMismatch),
	"ErrorInvalidContext": int64(ErrorInvalidContext), "ErrorMapFailed": int64(ErrorMapFailed),
	"ErrorPeerAccessUnsupport": int64(ErrorPeerAccessUnsupport), "ErrorJitCompilerNotFound": int64(ErrorJitCompilerNotFound),
	"ErrorOperatingSystem": int64(ErrorOperatingSystem), "ErrorInvalidHandle": int64(ErrorInvalidHandle),
	"ErrorTooManyPeers": int64(ErrorTooManyPeers), "StreamNonBlocking": StreamNonBlocking, "EventDefault": EventDefault,
	"MemHostAllocPortable": MemHostAllocPortable, "MemHostAllocDeviceMap": MemHostAllocDeviceMap,
	"IpcMemLazyEnablePeerAcces": IpcMemLazyEnablePeerAcces, "AttrMultiprocessorCount": AttrMultiprocessorCount,
	"JitInfoLogBuffer": int64(JitInfoLogBuffer), "JitInfoLogBufferBytes": int64(JitInfoLogBufferBytes),
	"JitErrorLogBuffer": int64(JitErrorLogBuffer), "JitErrorLogBufferBytes": int64(JitErrorLogBufferBytes),
}

// abi lists every constant and type width this package mirrors from cuda.h, by its cuda.h name,
// with the Go value, for scripts/gpu-abi-check.sh.
func abi() []string {
	out := []string{
		fmt.Sprintf("sizeof CUipcMemHandle %d", unsafe.Sizeof(IpcMemHandle{})),
		fmt.Sprintf("sizeof CUdeviceptr %d", unsafe.Sizeof(DevicePtr(0))),
		fmt.Sprintf("sizeof CUdevice %d", unsafe.Sizeof(Device(0))),
		fmt.Sprintf("sizeof CUresult %d", unsafe.Sizeof(Success)),
		fmt.Sprintf("sizeof CUjit_option %d", unsafe.Sizeof(JitInfoLogBuffer)),
		fmt.Sprintf("sizeof CUcontext %d", unsafe.Sizeof(Context(0))),
		fmt.Sprintf("sizeof CUstream %d", unsafe.Sizeof(Stream(0))),
		fmt.Sprintf("sizeof CUevent %d", unsafe.Sizeof(Event(0))),
		fmt.Sprintf("sizeof CUmodule %d", unsafe.Sizeof(Module(0))),
		fmt.Sprintf("sizeof CUfunction %d", unsafe.Sizeof(Function(0))),
	}
	for g, c := range cNames {
		out = append(out, fmt.Sprintf("const %s %d", c, goValues[g]))
	}
	return out
}

// TestDumpABI writes abi() to the file $GPU_ABI_DUMP for scripts/gpu-abi-check.sh.
func TestDumpABI(t *testing.T) {
	path := os.Getenv("GPU_ABI_DUMP")
	if path == "" {
		t.Skip("GPU_ABI_DUMP is not set: only scripts/gpu-abi-check.sh needs the dump")
	}
	if err := os.WriteFile(path, []byte(strings.Join(abi(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every constant of cuda.go is in abi(), so the header check covers everything mirrored.
func TestABICoversEveryConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "cuda.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				_, named := cNames[n.Name]
				_, valued := goValues[n.Name]
				if n.Name != "Library" && (!named || !valued) {
					t.Errorf("constant %s of cuda.go is not in abi(): the header check would miss it", n.Name)
				}
			}
		}
	}
}
