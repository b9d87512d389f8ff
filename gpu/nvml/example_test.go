package nvml_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/nvml"
)

// CUDA_VISIBLE_DEVICES picks devices by CUDA index or UUID; MapOrdinals says which NVML device
// each CUDA ordinal is.
func ExampleMapOrdinals() {
	ids := []nvml.Identity{
		{Index: 0, UUID: "GPU-aaaa", BusID: "00000000:18:00.0"},
		{Index: 1, UUID: "GPU-bbbb", BusID: "00000000:2a:00.0"},
		{Index: 2, UUID: "GPU-cccc", BusID: "00000000:3a:00.0"},
	}
	visible := "GPU-cccc,0"
	ordinals, err := nvml.MapOrdinals(&visible, ids)
	if err != nil {
		fmt.Println(err)
		return
	}
	for ord, idx := range ordinals {
		fmt.Printf("cuda:%d = nvml:%d\n", ord, idx)
	}
	// Output:
	// cuda:0 = nvml:2
	// cuda:1 = nvml:0
}

func ExampleLib_Inventory() {
	lib, err := nvml.Open(nvml.Options{Fake: true, FakeGPUs: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lib.Close()
	inv, err := lib.Inventory(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range inv.GPUs {
		fmt.Println(g.Index, g.Name, g.PCIBusID, "NUMA", g.NUMANode)
	}
	fmt.Println("pair 0-1:", inv.Pairs[0].Link, inv.Pairs[0].Topology)
	// Output:
	// 0 NVIDIA H200 141GB HBM3e 00000000:18:00.0 NUMA 0
	// 1 NVIDIA H200 141GB HBM3e 00000000:2a:00.0 NUMA 1
	// pair 0-1: NV18 SYS
}
