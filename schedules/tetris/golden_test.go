package tetris

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// TestGoldenSchedules pins the schedule files Tetris writes for the hand-worked demands (the
// circuits, paths and times that TestHandWorked4x4 and TestHandWorked8x8 derive step by step), so a
// change in the file format or in the planner's choices shows up in review. The files must also
// read back through schedules.ReadSchedule.
func TestGoldenSchedules(t *testing.T) {
	cases := []struct {
		file string
		d    *schedules.Demand
		o    schedules.Options
	}{
		{"tetris_4x4.json", demandOf(4, map[pair]int64{{0, 1}: 4, {0, 2}: 2, {1, 0}: 3, {2, 1}: 1, {3, 2}: 5}),
			schedules.Options{Bandwidth: 1, Reconfig: 1}},
		{"tetris_8x8.json", demandOf(8, map[pair]int64{{6, 4}: 9, {7, 5}: 8, {1, 4}: 1, {1, 5}: 1, {2, 0}: 3, {4, 6}: 2}),
			schedules.Options{Bandwidth: 1, Reconfig: 1}},
		{"snb_4x4_no_partial.json", demandOf(4, map[pair]int64{{0, 1}: 4, {0, 2}: 2, {1, 0}: 3, {2, 1}: 1, {3, 2}: 5}),
			schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: schedules.Crossbar, NoPartial: true}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, err := Schedule(context.Background(), c.d, c.o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(s, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", c.file)
			if goldenfile.Update() {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("schedule differs from %s (run with -update after checking the change):\n%s", path, got)
			}
			back, err := schedules.ReadSchedule(bytes.NewReader(want), path)
			if err != nil {
				t.Fatal(err)
			}
			if vs := schedules.Verify(back, c.d); len(vs) > 0 {
				t.Fatal(schedules.ViolationsError(vs))
			}
		})
	}
}
