package emulator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// TestPathsCheckedRawPathIsAnError: a hop list that is not a physical path (kept as read) is
// checked even under Config.PathsChecked, in both modes and every way of running, and is an
// error naming the circuit and the traversal; never an index out of range or a timeline.
func TestPathsCheckedRawPathIsAnError(t *testing.T) {
	f, err := benes.New(8)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		breakHops func(h []benes.Traversal)
		want      string
	}{
		{"switch far off the fabric", func(h []benes.Traversal) { h[2].Switch = 1 << 20 }, "traversal 2 is [2,1048576"},
		{"negative stage", func(h []benes.Traversal) { h[1].Stage = -1 }, "traversal 1"},
		{"wrong input lane", func(h []benes.Traversal) { h[3].In ^= 1 }, "traversal 3"},
		{"out-lane 2", func(h []benes.Traversal) { h[4].Out = 2 }, "traversal 4 has out-lane 2"},
	} {
		for _, mode := range []schedules.Mode{schedules.Partial, schedules.Barrier} {
			hops := f.NewPath(0, 5, 3).Traversals()
			tc.breakHops(hops)
			s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "raw", N: 8, Ports: 8, Fabric: schedules.Benes, Mode: mode,
				Circuits: []schedules.Circuit{
					{Src: 1, Dst: 2, Bytes: 10, Path: f.NewPath(1, 2, 0)},
					{Src: 0, Dst: 5, Bytes: 10, Path: benes.PathOf(hops)},
				}}
			cfg := emulator.Config{Transfer: emulator.BandwidthModel(1e9), Reconfig: emulator.ParallelReconfig(1e-6), PathsChecked: true}
			for _, run := range []struct {
				how string
				fn  func() error
			}{
				{"Run", func() error { _, _, err := emulator.Run(context.Background(), s, nil, cfg); return err }},
				{"RunResult", func() error { _, err := emulator.RunResult(context.Background(), s, nil, cfg); return err }},
				{"RunChecked", func() error { _, _, err := emulator.RunChecked(context.Background(), s, nil, cfg); return err }},
			} {
				err := func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%s, %s, %s: panic: %v", tc.name, mode, run.how, r)
						}
					}()
					return run.fn()
				}()
				if err == nil || !strings.Contains(err.Error(), "circuit 1 (0→5)") || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s, %s, %s: %v, want an error naming circuit 1 and %q", tc.name, mode, run.how, err, tc.want)
				}
			}
		}
	}
}
