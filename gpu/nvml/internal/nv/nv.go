// Package nv is the part of the NVML C API the harness calls, bound at run time from
// libnvidia-ml.so.1 through purego (as gpu/cuda binds the CUDA driver): no cgo, no C compiler
// and no NVML header at build time, so a default build prints no compiler warnings (go-nvml's
// cgo wrappers print ~150 deprecation warnings on their first build) and CGO_ENABLED=0 builds
// work. Names and values follow nvml.h (and go-nvml's spelling of them), so the code above reads
// as NVML code; Interface and Device are what the real library and the fake server implement.
package nv

import "fmt"

// Return is an nvmlReturn_t.
type Return int32

// Return values (nvml.h).
const (
	SUCCESS                         Return = 0
	ERROR_UNINITIALIZED             Return = 1
	ERROR_INVALID_ARGUMENT          Return = 2
	ERROR_NOT_SUPPORTED             Return = 3
	ERROR_NO_PERMISSION             Return = 4
	ERROR_ALREADY_INITIALIZED       Return = 5
	ERROR_NOT_FOUND                 Return = 6
	ERROR_INSUFFICIENT_SIZE         Return = 7
	ERROR_INSUFFICIENT_POWER        Return = 8
	ERROR_DRIVER_NOT_LOADED         Return = 9
	ERROR_TIMEOUT                   Return = 10
	ERROR_IRQ_ISSUE                 Return = 11
	ERROR_LIBRARY_NOT_FOUND         Return = 12
	ERROR_FUNCTION_NOT_FOUND        Return = 13
	ERROR_CORRUPTED_INFOROM         Return = 14
	ERROR_GPU_IS_LOST               Return = 15
	ERROR_RESET_REQUIRED            Return = 16
	ERROR_OPERATING_SYSTEM          Return = 17
	ERROR_LIB_RM_VERSION_MISMATCH   Return = 18
	ERROR_IN_USE                    Return = 19
	ERROR_MEMORY                    Return = 20
	ERROR_NO_DATA                   Return = 21
	ERROR_VGPU_ECC_NOT_SUPPORTED    Return = 22
	ERROR_INSUFFICIENT_RESOURCES    Return = 23
	ERROR_FREQ_NOT_SUPPORTED        Return = 24
	ERROR_ARGUMENT_VERSION_MISMATCH Return = 25
	ERROR_DEPRECATED                Return = 26
	ERROR_NOT_READY                 Return = 27
	ERROR_GPU_NOT_FOUND             Return = 28
	ERROR_INVALID_STATE             Return = 29
	ERROR_RESET_TYPE_NOT_SUPPORTED  Return = 30
	ERROR_UNKNOWN                   Return = 999
)

var returnNames = map[Return]string{
	SUCCESS: "SUCCESS", ERROR_UNINITIALIZED: "ERROR_UNINITIALIZED",
	ERROR_INVALID_ARGUMENT: "ERROR_INVALID_ARGUMENT", ERROR_NOT_SUPPORTED: "ERROR_NOT_SUPPORTED",
	ERROR_NO_PERMISSION: "ERROR_NO_PERMISSION", ERROR_ALREADY_INITIALIZED: "ERROR_ALREADY_INITIALIZED",
	ERROR_NOT_FOUND: "ERROR_NOT_FOUND", ERROR_INSUFFICIENT_SIZE: "ERROR_INSUFFICIENT_SIZE",
	ERROR_INSUFFICIENT_POWER: "ERROR_INSUFFICIENT_POWER", ERROR_DRIVER_NOT_LOADED: "ERROR_DRIVER_NOT_LOADED",
	ERROR_TIMEOUT: "ERROR_TIMEOUT", ERROR_IRQ_ISSUE: "ERROR_IRQ_ISSUE",
	ERROR_LIBRARY_NOT_FOUND: "ERROR_LIBRARY_NOT_FOUND", ERROR_FUNCTION_NOT_FOUND: "ERROR_FUNCTION_NOT_FOUND",
	ERROR_CORRUPTED_INFOROM: "ERROR_CORRUPTED_INFOROM", ERROR_GPU_IS_LOST: "ERROR_GPU_IS_LOST",
	ERROR_RESET_REQUIRED: "ERROR_RESET_REQUIRED", ERROR_OPERATING_SYSTEM: "ERROR_OPERATING_SYSTEM",
	ERROR_LIB_RM_VERSION_MISMATCH: "ERROR_LIB_RM_VERSION_MISMATCH", ERROR_IN_USE: "ERROR_IN_USE",
	ERROR_MEMORY: "ERROR_MEMORY", ERROR_NO_DATA: "ERROR_NO_DATA",
	ERROR_VGPU_ECC_NOT_SUPPORTED: "ERROR_VGPU_ECC_NOT_SUPPORTED", ERROR_INSUFFICIENT_RESOURCES: "ERROR_INSUFFICIENT_RESOURCES",
	ERROR_FREQ_NOT_SUPPORTED: "ERROR_FREQ_NOT_SUPPORTED", ERROR_ARGUMENT_VERSION_MISMATCH: "ERROR_ARGUMENT_VERSION_MISMATCH",
	ERROR_DEPRECATED: "ERROR_DEPRECATED", ERROR_NOT_READY: "ERROR_NOT_READY",
	ERROR_GPU_NOT_FOUND: "ERROR_GPU_NOT_FOUND", ERROR_INVALID_STATE: "ERROR_INVALID_STATE",
	ERROR_RESET_TYPE_NOT_SUPPORTED: "ERROR_RESET_TYPE_NOT_SUPPORTED",
	ERROR_UNKNOWN:                  "ERROR_UNKNOWN",
}

// String names r as nvml.h does (go-nvml prints the same names).
func (r Return) String() string {
	if s, ok := returnNames[r]; ok {
		return s
	}
	return fmt.Sprintf("unknown return value: %d", int32(r))
}

// Error makes a Return usable as an error.
func (r Return) Error() string { return r.String() }

// ClockType is an nvmlClockType_t.
type ClockType int32

// Clock domains.
const (
	CLOCK_GRAPHICS ClockType = 0
	CLOCK_SM       ClockType = 1
	CLOCK_MEM      ClockType = 2
	CLOCK_VIDEO    ClockType = 3
)

// TemperatureSensors is an nvmlTemperatureSensors_t.
type TemperatureSensors int32

// TEMPERATURE_GPU is the GPU die sensor.
const TEMPERATURE_GPU TemperatureSensors = 0

// GpuTopologyLevel is an nvmlGpuTopologyLevel_t.
type GpuTopologyLevel int32

// Common-ancestor levels.
const (
	TOPOLOGY_INTERNAL   GpuTopologyLevel = 0
	TOPOLOGY_SINGLE     GpuTopologyLevel = 10
	TOPOLOGY_MULTIPLE   GpuTopologyLevel = 20
	TOPOLOGY_HOSTBRIDGE GpuTopologyLevel = 30
	TOPOLOGY_NODE       GpuTopologyLevel = 40
	TOPOLOGY_SYSTEM     GpuTopologyLevel = 50
)

// GpuP2PStatus is an nvmlGpuP2PStatus_t.
type GpuP2PStatus int32

// P2P statuses.
const (
	P2P_STATUS_OK                         GpuP2PStatus = 0
	P2P_STATUS_CHIPSET_NOT_SUPPORTED      GpuP2PStatus = 1
	P2P_STATUS_GPU_NOT_SUPPORTED          GpuP2PStatus = 2
	P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED GpuP2PStatus = 3
	P2P_STATUS_DISABLED_BY_REGKEY         GpuP2PStatus = 4
	P2P_STATUS_NOT_SUPPORTED              GpuP2PStatus = 5
	P2P_STATUS_UNKNOWN                    GpuP2PStatus = 6
)

// GpuP2PCapsIndex is an nvmlGpuP2PCapsIndex_t.
type GpuP2PCapsIndex int32

// P2P capabilities.
const (
	P2P_CAPS_INDEX_READ    GpuP2PCapsIndex = 0
	P2P_CAPS_INDEX_WRITE   GpuP2PCapsIndex = 1
	P2P_CAPS_INDEX_NVLINK  GpuP2PCapsIndex = 2
	P2P_CAPS_INDEX_ATOMICS GpuP2PCapsIndex = 3
)

// EnableState is an nvmlEnableState_t.
type EnableState int32

// Feature states.
const (
	FEATURE_DISABLED EnableState = 0
	FEATURE_ENABLED  EnableState = 1
)

// NVLINK_MAX_LINKS is the most NVLinks a device can have: 36 in nvml.h of CUDA 13.3, 18 in the
// nvml.h of CUDA 11.8 (Debian's, for driver R535) through 13.2.1. The inventory asks about 36
// links on every driver; a link past a device's count answers INVALID_ARGUMENT or NOT_SUPPORTED.
const NVLINK_MAX_LINKS = 36

// Clock event (throttle) reason bits.
const (
	ClocksThrottleReasonGpuIdle                   uint64 = 0x1
	ClocksThrottleReasonApplicationsClocksSetting uint64 = 0x2
	ClocksThrottleReasonSwPowerCap                uint64 = 0x4
	ClocksThrottleReasonHwSlowdown                uint64 = 0x8
	ClocksThrottleReasonSyncBoost                 uint64 = 0x10
	ClocksThrottleReasonSwThermalSlowdown         uint64 = 0x20
	ClocksThrottleReasonHwThermalSlowdown         uint64 = 0x40
	ClocksThrottleReasonHwPowerBrakeSlowdown      uint64 = 0x80
	ClocksThrottleReasonDisplayClockSetting       uint64 = 0x100
)

// PciInfo is nvmlPciInfo_t (the _v3 layout).
type PciInfo struct {
	BusIdLegacy    [16]int8
	Domain         uint32
	Bus            uint32
	Device         uint32
	PciDeviceId    uint32
	PciSubSystemId uint32
	BusId          [32]int8
}

// Temperature is nvmlTemperature_v1_t, the argument of nvmlDeviceGetTemperatureV.
type Temperature struct {
	Version     uint32
	SensorType  TemperatureSensors
	Temperature int32
}

// Temperature_v1 is nvml.h's NVML_STRUCT_VERSION(Temperature, 1): the struct's size with the
// version in the top byte.
const Temperature_v1 = uint32(12 | 1<<24)

// Memory is nvmlMemory_t.
type Memory struct {
	Total uint64
	Free  uint64
	Used  uint64
}

// Interface is the library-level calls.
type Interface interface {
	Init() Return
	Shutdown() Return
	DeviceGetCount() (int, Return)
	DeviceGetHandleByIndex(int) (Device, Return)
	SystemGetDriverVersion() (string, Return)
	SystemGetNVMLVersion() (string, Return)
	SystemGetCudaDriverVersion() (int, Return)
}

// Device is the per-device calls.
type Device interface {
	GetUUID() (string, Return)
	GetName() (string, Return)
	GetPciInfo() (PciInfo, Return)
	GetMemoryInfo() (Memory, Return)
	GetNumaNodeId() (int, Return)
	GetCpuAffinity(numCPUs int) ([]uint, Return)
	SetCpuAffinity() Return
	GetNvLinkState(link int) (EnableState, Return)
	GetMaxClockInfo(ClockType) (uint32, Return)
	GetClockInfo(ClockType) (uint32, Return)
	GetCudaComputeCapability() (int, int, Return)
	GetTemperature(TemperatureSensors) (uint32, Return)
	GetCurrentClocksEventReasons() (uint64, Return)
	GetCurrentClocksThrottleReasons() (uint64, Return)
	SetGpuLockedClocks(lo, hi uint32) Return
	ResetGpuLockedClocks() Return
	GetTopologyCommonAncestor(Device) (GpuTopologyLevel, Return)
	GetP2PStatus(Device, GpuP2PCapsIndex) (GpuP2PStatus, Return)
}
