package nvml

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeBusID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"00000000:18:00.0", "0000:18:00.0"}, // NVML
		{"0000:18:00.0", "0000:18:00.0"},     // CUDA
		{"0000:DB:00.0", "0000:db:00.0"},     // CUDA prints upper-case hex
		{"18:00.0", "0000:18:00.0"},          // legacy form without a domain
		{"00000001:9A:01.1", "0001:9a:01.1"},
	}
	for _, tt := range tests {
		got, err := NormalizeBusID(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeBusID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "0000:18", "0000:18:00", "zz:18:00.0"} {
		if _, err := NormalizeBusID(bad); err == nil {
			t.Errorf("NormalizeBusID(%q) succeeded, want error", bad)
		}
	}
}

func TestMapOrdinals(t *testing.T) {
	// NVML's index order is not bus order here: NVML 0 sits on bus 0x3a, NVML 1 on 0x18. CUDA
	// enumerates by bus, so CUDA's full order is NVML 1 (0x18), 3 (0x2a), 0 (0x3a), 2 (0x5d).
	ids := []Identity{
		{Index: 0, UUID: "GPU-aaaa1111-0000-4000-8000-000000000000", BusID: "00000000:3A:00.0"},
		{Index: 1, UUID: "GPU-bbbb2222-0000-4000-8000-000000000000", BusID: "00000000:18:00.0"},
		{Index: 2, UUID: "GPU-aaaa3333-0000-4000-8000-000000000000", BusID: "0000:5d:00.0"},
		{Index: 3, UUID: "GPU-cccc4444-0000-4000-8000-000000000000", BusID: "00000000:2a:00.0"},
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		visible *string
		want    []int  // CUDA ordinal -> NVML index
		wantErr string // substring of the error, when one is expected
	}{
		{name: "unset: all, bus order", visible: nil, want: []int{1, 3, 0, 2}},
		{name: "empty: none", visible: str(""), want: []int{}},
		{name: "indices are CUDA's, not NVML's", visible: str("0"), want: []int{1}},
		{name: "reordered indices", visible: str("2,0"), want: []int{0, 1}},
		{name: "full UUIDs reordered", visible: str("GPU-cccc4444-0000-4000-8000-000000000000,GPU-aaaa1111-0000-4000-8000-000000000000"), want: []int{3, 0}},
		{name: "unique UUID prefix", visible: str("GPU-bbbb"), want: []int{1}},
		{name: "upper-case UUID", visible: str("GPU-AAAA3333"), want: []int{2}},
		{name: "mixed index and UUID, spaces", visible: str(" 3 , GPU-cccc"), want: []int{2, 3}},
		{name: "index out of range", visible: str("0,4"), wantErr: `entry "4" is neither`},
		{name: "garbage", visible: str("x"), wantErr: `entry "x"`},
		{name: "ambiguous prefix", visible: str("GPU-aaaa"), wantErr: "more than one GPU"},
		{name: "unknown UUID", visible: str("GPU-dddd"), wantErr: "no GPU has UUID"},
		{name: "repeated device", visible: str("1,GPU-cccc"), wantErr: "names GPU 3 again"},
		{name: "MIG instance", visible: str("MIG-1234"), wantErr: "MIG instance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MapOrdinals(tt.visible, ids)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("MapOrdinals = %v, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("MapOrdinals = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestInventoryOrdinalsFollowVisibleDevices(t *testing.T) {
	lib, err := Open(Options{Fake: true})
	if err != nil {
		t.Fatal(err)
	}
	visible := "5," + fakeUUID(2)
	inv, err := lib.Inventory(&visible)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{5: 0, 2: 1} // NVML index -> CUDA ordinal
	for _, g := range inv.GPUs {
		w, ok := want[g.Index]
		if !ok {
			w = -1
		}
		if g.CUDAOrdinal != w {
			t.Errorf("GPU %d: CUDA ordinal %d, want %d", g.Index, g.CUDAOrdinal, w)
		}
	}
}

func TestSysfsNUMANode(t *testing.T) {
	root := t.TempDir()
	for id, v := range map[string]string{"0000:18:00.0": "1\n", "0000:2a:00.0": "-1\n", "0000:3a:00.0": "x"} {
		if err := os.MkdirAll(filepath.Join(root, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, id, "numa_node"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		busID string
		node  int
		ok    bool
	}{
		{"00000000:18:00.0", 1, true}, // NVML's spelling, normalised to the kernel's
		{"0000:2A:00.0", 0, false},    // -1: no node
		{"0000:3a:00.0", 0, false},    // not a number
		{"0000:5d:00.0", 0, false},    // no such device
		{"bogus", 0, false},
	} {
		if n, ok := sysfsNUMANode(root, c.busID); n != c.node || ok != c.ok {
			t.Errorf("sysfsNUMANode(%q) = %d, %v; want %d, %v", c.busID, n, ok, c.node, c.ok)
		}
	}
}
