package fake_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
)

// An engine is opened by driver name, like a database/sql driver; the fake's options are its
// Model in string form. Here a noise-free model, so each time is α + m/B (2 µs + 1 MiB at 100 GB/s), to the nanosecond.
func Example() {
	ctx := context.Background()
	m := fake.Defaults
	m.Alpha, m.Bandwidth, m.Spread, m.Noise, m.Outliers = 2e-6, 100e9, 0, 0, 0
	eng, err := transfer.Open(ctx, "fake", transfer.Config{Device: transfer.Device{GPU: 0}, Options: m.String()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()
	dst, err := eng.Peer(ctx, transfer.Device{GPU: 1, CUDAOrdinal: 1}, 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	tm, err := eng.Copy(ctx, dst, transfer.Copy{Bytes: 1 << 20, Reps: 3, Kind: transfer.CE})
	fmt.Println(tm.Times, err)
	// Output: [12.486µs 12.486µs 12.486µs] <nil>
}
