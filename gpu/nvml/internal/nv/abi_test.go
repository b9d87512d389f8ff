package nv

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

// abi lists every constant and struct layout this package mirrors from nvml.h, by its nvml.h
// name, with the Go value: scripts/gpu-abi-check.sh compares each with a C program compiled
// against NVIDIA's headers. A "min" entry is one where the Go value may exceed an older
// header's (NVML_NVLINK_MAX_LINKS grew from 18 to 36; asking about more links is harmless).
func abi() []string {
	c := func(name string, v any) string { return fmt.Sprintf("const %s %d", name, v) }
	var p PciInfo
	var tmp Temperature
	var m Memory
	out := []string{
		fmt.Sprintf("sizeof nvmlPciInfo_t %d", unsafe.Sizeof(p)),
		fmt.Sprintf("offsetof nvmlPciInfo_t busIdLegacy %d", unsafe.Offsetof(p.BusIdLegacy)),
		fmt.Sprintf("offsetof nvmlPciInfo_t domain %d", unsafe.Offsetof(p.Domain)),
		fmt.Sprintf("offsetof nvmlPciInfo_t bus %d", unsafe.Offsetof(p.Bus)),
		fmt.Sprintf("offsetof nvmlPciInfo_t device %d", unsafe.Offsetof(p.Device)),
		fmt.Sprintf("offsetof nvmlPciInfo_t pciDeviceId %d", unsafe.Offsetof(p.PciDeviceId)),
		fmt.Sprintf("offsetof nvmlPciInfo_t pciSubSystemId %d", unsafe.Offsetof(p.PciSubSystemId)),
		fmt.Sprintf("offsetof nvmlPciInfo_t busId %d", unsafe.Offsetof(p.BusId)),
		fmt.Sprintf("sizeof nvmlMemory_t %d", unsafe.Sizeof(m)),
		fmt.Sprintf("offsetof nvmlMemory_t total %d", unsafe.Offsetof(m.Total)),
		fmt.Sprintf("offsetof nvmlMemory_t free %d", unsafe.Offsetof(m.Free)),
		fmt.Sprintf("offsetof nvmlMemory_t used %d", unsafe.Offsetof(m.Used)),
		fmt.Sprintf("sizeof nvmlTemperature_v1_t %d", unsafe.Sizeof(tmp)),
		fmt.Sprintf("offsetof nvmlTemperature_v1_t version %d", unsafe.Offsetof(tmp.Version)),
		fmt.Sprintf("offsetof nvmlTemperature_v1_t sensorType %d", unsafe.Offsetof(tmp.SensorType)),
		fmt.Sprintf("offsetof nvmlTemperature_v1_t temperature %d", unsafe.Offsetof(tmp.Temperature)),
		fmt.Sprintf("sizeof nvmlReturn_t %d", unsafe.Sizeof(SUCCESS)),
		fmt.Sprintf("sizeof nvmlClockType_t %d", unsafe.Sizeof(CLOCK_SM)),
		fmt.Sprintf("sizeof nvmlTemperatureSensors_t %d", unsafe.Sizeof(TEMPERATURE_GPU)),
		fmt.Sprintf("sizeof nvmlGpuTopologyLevel_t %d", unsafe.Sizeof(TOPOLOGY_SYSTEM)),
		fmt.Sprintf("sizeof nvmlGpuP2PStatus_t %d", unsafe.Sizeof(P2P_STATUS_OK)),
		fmt.Sprintf("sizeof nvmlGpuP2PCapsIndex_t %d", unsafe.Sizeof(P2P_CAPS_INDEX_READ)),
		fmt.Sprintf("sizeof nvmlEnableState_t %d", unsafe.Sizeof(FEATURE_ENABLED)),
		fmt.Sprintf("sizeof nvmlDevice_t %d", unsafe.Sizeof(uintptr(0))),
		fmt.Sprintf("sizeof unsigned_long %d", unsafe.Sizeof(uint64(0))), // GetCpuAffinity's words
		c("nvmlTemperature_v1", Temperature_v1),
		c("NVML_NVLINK_MAX_LINKS", NVLINK_MAX_LINKS) + " min",
		c("NVML_TEMPERATURE_GPU", TEMPERATURE_GPU),
		c("NVML_CLOCK_GRAPHICS", CLOCK_GRAPHICS), c("NVML_CLOCK_SM", CLOCK_SM),
		c("NVML_CLOCK_MEM", CLOCK_MEM), c("NVML_CLOCK_VIDEO", CLOCK_VIDEO),
		c("NVML_TOPOLOGY_INTERNAL", TOPOLOGY_INTERNAL), c("NVML_TOPOLOGY_SINGLE", TOPOLOGY_SINGLE),
		c("NVML_TOPOLOGY_MULTIPLE", TOPOLOGY_MULTIPLE), c("NVML_TOPOLOGY_HOSTBRIDGE", TOPOLOGY_HOSTBRIDGE),
		c("NVML_TOPOLOGY_NODE", TOPOLOGY_NODE), c("NVML_TOPOLOGY_SYSTEM", TOPOLOGY_SYSTEM),
		c("NVML_P2P_STATUS_OK", P2P_STATUS_OK),
		c("NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED", P2P_STATUS_CHIPSET_NOT_SUPPORTED),
		c("NVML_P2P_STATUS_GPU_NOT_SUPPORTED", P2P_STATUS_GPU_NOT_SUPPORTED),
		c("NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED", P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED),
		c("NVML_P2P_STATUS_DISABLED_BY_REGKEY", P2P_STATUS_DISABLED_BY_REGKEY),
		c("NVML_P2P_STATUS_NOT_SUPPORTED", P2P_STATUS_NOT_SUPPORTED),
		c("NVML_P2P_STATUS_UNKNOWN", P2P_STATUS_UNKNOWN),
		c("NVML_P2P_CAPS_INDEX_READ", P2P_CAPS_INDEX_READ), c("NVML_P2P_CAPS_INDEX_WRITE", P2P_CAPS_INDEX_WRITE),
		c("NVML_P2P_CAPS_INDEX_NVLINK", P2P_CAPS_INDEX_NVLINK), c("NVML_P2P_CAPS_INDEX_ATOMICS", P2P_CAPS_INDEX_ATOMICS),
		c("NVML_FEATURE_DISABLED", FEATURE_DISABLED), c("NVML_FEATURE_ENABLED", FEATURE_ENABLED),
		c("nvmlClocksThrottleReasonGpuIdle", ClocksThrottleReasonGpuIdle),
		c("nvmlClocksThrottleReasonApplicationsClocksSetting", ClocksThrottleReasonApplicationsClocksSetting),
		c("nvmlClocksThrottleReasonSwPowerCap", ClocksThrottleReasonSwPowerCap),
		c("nvmlClocksThrottleReasonHwSlowdown", ClocksThrottleReasonHwSlowdown),
		c("nvmlClocksThrottleReasonSyncBoost", ClocksThrottleReasonSyncBoost),
		c("nvmlClocksThrottleReasonSwThermalSlowdown", ClocksThrottleReasonSwThermalSlowdown),
		c("nvmlClocksThrottleReasonHwThermalSlowdown", ClocksThrottleReasonHwThermalSlowdown),
		c("nvmlClocksThrottleReasonHwPowerBrakeSlowdown", ClocksThrottleReasonHwPowerBrakeSlowdown),
		c("nvmlClocksThrottleReasonDisplayClockSetting", ClocksThrottleReasonDisplayClockSetting),
	}
	for r, name := range returnNames {
		out = append(out, c("NVML_"+name, r))
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

// Every constant of nv.go is in abi(), so the header check covers everything mirrored.
func TestABICoversEveryConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "nv.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	dump := strings.Join(abi(), "\n")
	covered := func(goName string) bool {
		for _, cName := range []string{"NVML_" + goName, "nvml" + goName, goName} {
			if strings.Contains(dump, "const "+cName+" ") {
				return true
			}
		}
		return false
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if !covered(n.Name) {
					t.Errorf("constant %s of nv.go is not in abi(): the header check would miss it", n.Name)
				}
			}
		}
	}
}
