package nvml

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

func fakeInventory(t *testing.T, n int) *Inventory {
	t.Helper()
	lib, err := Open(Options{Fake: true, FakeGPUs: n})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := lib.Inventory(nil)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestFakeInventoryGolden(t *testing.T) {
	inv := fakeInventory(t, 8)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, inv); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/"+"inventory_fake8.json", buf.Bytes())

	buf.Reset()
	if err := WriteMatrix(&buf, inv); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/"+"topo_fake8.txt", buf.Bytes())
}

// TestFakeInventoryIsADGX checks the fake against what a DGX H200 is, independently of the golden.
func TestFakeInventoryIsADGX(t *testing.T) {
	inv := fakeInventory(t, 8)
	if len(inv.GPUs) != 8 || len(inv.Pairs) != 28 {
		t.Fatalf("%d GPUs, %d pairs; want 8 and 8·7/2 = 28", len(inv.GPUs), len(inv.Pairs))
	}
	uuids := map[string]bool{}
	for i, g := range inv.GPUs {
		if g.Index != i || g.CUDAOrdinal != i || g.NVLinksUp != 18 || g.Name != "NVIDIA H200 141GB HBM3e" {
			t.Errorf("GPU %d: %+v", i, g)
		}
		uuids[g.UUID] = true
		wantNode := i / 4
		cpus, _ := affinity.Parse(g.CPUAffinity)
		if g.NUMANode != wantNode || len(cpus) != 112 || cpus[0] != wantNode {
			t.Errorf("GPU %d: NUMA %d, %d CPUs from %d; want node %d, 112 CPUs from %d", i, g.NUMANode, len(cpus), cpus[0], wantNode, wantNode)
		}
	}
	if len(uuids) != 8 {
		t.Errorf("UUIDs not unique: %v", uuids)
	}
	for _, p := range inv.Pairs {
		wantTopo := "SYS"
		if p.A/4 == p.B/4 {
			wantTopo = "NODE"
		}
		if p.Topology != wantTopo || p.Link != "NV18" || p.P2PRead != "OK" || p.P2PLink != "OK" {
			t.Errorf("pair %d-%d: %+v; want topology %s over NV18", p.A, p.B, p, wantTopo)
		}
	}
	// Two fakes are identical: nothing random leaks into the inventory.
	a, _ := json.Marshal(inv)
	b, _ := json.Marshal(fakeInventory(t, 8))
	if !bytes.Equal(a, b) {
		t.Error("two fake inventories differ")
	}
}

func TestFakeGPUCount(t *testing.T) {
	inv := fakeInventory(t, 2)
	if len(inv.GPUs) != 2 || len(inv.Pairs) != 1 || inv.GPUs[1].NUMANode != 1 {
		t.Errorf("2-GPU fake: %d GPUs, %d pairs, GPU1 on node %d", len(inv.GPUs), len(inv.Pairs), inv.GPUs[1].NUMANode)
	}
	if _, err := Open(Options{Fake: true, FakeGPUs: -1}); err == nil {
		t.Error("Open with -1 fake GPUs succeeded")
	}
}

// TestOpenWithoutDriver runs where there is no NVIDIA driver (as on CI): the error must say what
// is missing and point at --fake.
func TestOpenWithoutDriver(t *testing.T) {
	if standin.Loaded(standin.NVML) {
		t.Skip("the stand-in libnvidia-ml.so.1 is loaded in this process")
	}
	lib, err := Open(Options{})
	if err == nil {
		lib.Close()
		t.Skip("this machine has NVML and a GPU")
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v is not ErrUnavailable", err)
	}
	for _, want := range []string{"libnvidia-ml.so.1", "--fake"} {
		if !strings.Contains(err.Error(), want) && !strings.Contains(err.Error(), "no GPU") {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestThrottleReasons(t *testing.T) {
	tests := []struct {
		mask uint64
		want []string
	}{
		{0, []string{}},
		{1, []string{"gpu_idle"}},
		{4 | 64, []string{"sw_power_cap", "hw_thermal_slowdown"}},
		{1 << 20, []string{"0x100000"}},
	}
	for _, tt := range tests {
		if got := ThrottleReasons(tt.mask); !slices.Equal(got, tt.want) {
			t.Errorf("ThrottleReasons(%#x) = %v, want %v", tt.mask, got, tt.want)
		}
	}
}

func TestLockClocksRestoresOnCancel(t *testing.T) {
	lib, _ := Open(Options{Fake: true})
	ctx, cancel := context.WithCancel(context.Background())
	lock, err := lib.LockClocks(ctx, []int{0, 3}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := lib.Sample(3); s.SMClockMHz != 1500 || !slices.Contains(s.ThrottleReasons, "clocks_setting") {
		t.Errorf("locked GPU 3 reads %+v, want 1500 MHz held by clocks_setting", s)
	}
	if got := lib.fake.lockedGPUs(); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("locked GPUs %v, want [0 3]", got)
	}
	cancel() // what SIGINT does through signal.NotifyContext
	deadline := time.Now().Add(2 * time.Second)
	for len(lib.fake.lockedGPUs()) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := lib.fake.lockedGPUs(); len(got) > 0 {
		t.Fatalf("GPUs %v still locked after the context ended", got)
	}
	if err := lock.Restore(); err != nil {
		t.Errorf("second Restore: %v", err)
	}
}

func TestLockClocksFailureUnlocksOthers(t *testing.T) {
	lib, _ := Open(Options{Fake: true})
	// 0 means each GPU's max clock; GPU 9 does not exist, so the lock must fail and undo GPU 1.
	if _, err := lib.LockClocks(context.Background(), []int{1, 9}, 0); err == nil || !strings.Contains(err.Error(), "GPU 9") {
		t.Fatalf("err = %v, want an error naming GPU 9", err)
	}
	if got := lib.fake.lockedGPUs(); len(got) > 0 {
		t.Errorf("GPUs %v left locked after a failed LockClocks", got)
	}
	if _, err := lib.LockClocks(context.Background(), []int{0}, 5000); err == nil || !strings.Contains(err.Error(), "5000 MHz") {
		t.Errorf("locking above the max clock: err = %v", err)
	}
}

// TestFakePin pins a real child through the fake NVML: it must run on the GPU's NUMA node's CPUs
// that this machine has.
func TestFakePin(t *testing.T) {
	lib, _ := Open(Options{Fake: true})
	avail, err := affinity.Available()
	if err != nil {
		t.Fatal(err)
	}
	for _, gpu := range []int{0, 4} {
		want := FakeCPUs(gpu, 8).Intersect(avail)
		if len(want) == 0 {
			want = avail // one CPU and a GPU on the other node: the fake leaves the thread as is
		}
		var out bytes.Buffer
		cmd := exec.Command("/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
		cmd.Stdout = &out
		applied, err := affinity.StartPinned(func() error { return lib.Pin(gpu) }, func(affinity.Set) error { return cmd.Start() })
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		got, _ := affinity.Parse(strings.TrimSpace(strings.TrimPrefix(out.String(), "Cpus_allowed_list:")))
		if !applied.Equal(want) || !got.Equal(want) {
			t.Errorf("GPU %d: applied %s, child on %s; want %s", gpu, applied, got, want)
		}
	}
}
