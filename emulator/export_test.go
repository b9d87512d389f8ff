package emulator

import (
	"context"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// RoundTimelineOf is, for the external tests, the timeline by round that RunChecked checks for
// a barrier schedule (nil for a partial one).
func RoundTimelineOf(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, *schedules.RoundTimeline, error) {
	res, _, rt, err := runForCheck(ctx, s, d, cfg)
	return res, rt, err
}
