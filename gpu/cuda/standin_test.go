package cuda

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/standin"
)

func grow(depth int, f func()) byte {
	var pad [1024]byte
	pad[depth%len(pad)] = byte(depth)
	if depth == 0 {
		f()
		return pad[0]
	}
	return grow(depth-1, f) + pad[depth%len(pad)]
}

// TestStackDepthSweep calls the driver from thousands of goroutines at different stack depths
// and checks every value it wrote through an out-parameter (typed pointers of functions bound
// with purego.RegisterFunc escape to the heap, which does not move).
func TestStackDepthSweep(t *testing.T) {
	standin.Preload(t, standin.CUDA)
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check("cuInit", d.Init(0)); err != nil {
		t.Fatal(err)
	}
	const goroutines = 3000
	var (
		mu    sync.Mutex
		wrong = map[string]int{}
		first = map[string]string{}
		wg    sync.WaitGroup
	)
	bad := func(what, detail string) {
		mu.Lock()
		defer mu.Unlock()
		if wrong[what]++; wrong[what] == 1 {
			first[what] = detail
		}
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := int32(g % 8)
			grow(g%61, func() {
				var n, v, sms int32
				var dev Device
				if r := d.DeviceGetCount(&n); r != Success || n != 8 {
					bad("cuDeviceGetCount", fmt.Sprintf("%d, %d", n, r))
				}
				if r := d.DriverGetVersion(&v); r != Success || v != 12020 {
					bad("cuDriverGetVersion", fmt.Sprintf("%d, %d", v, r))
				}
				if r := d.DeviceGet(&dev, i); r != Success || dev != Device(i) {
					bad("cuDeviceGet", fmt.Sprintf("%d, %d", dev, r))
				}
				buf := make([]byte, 32)
				if r := d.DeviceGetPCIBusId(&buf[0], int32(len(buf)), Device(i)); r != Success || GoString(buf) != fmt.Sprintf("0000:%02X:00.0", 0x10+i) {
					bad("cuDeviceGetPCIBusId", fmt.Sprintf("%q, %d", GoString(buf), r))
				}
				if r := d.DeviceGetAttribute(&sms, AttrMultiprocessorCount, Device(i)); r != Success || sms != 132 {
					bad("cuDeviceGetAttribute", fmt.Sprintf("%d, %d", sms, r))
				}
			})
		}()
	}
	wg.Wait()
	for what, n := range wrong {
		t.Errorf("%s: %d of %d goroutines read a wrong value (first: %s)", what, n, goroutines, first[what])
	}
}
