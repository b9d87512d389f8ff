package main

import (
	"errors"
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// loadScheduleToRun reads a --schedule file for a command that executes it: the reader's header
// and limit checks (exit 2), then verify's static checks (exit 1, as verify exits for an invalid
// schedule), so that nothing verify rejects on the file alone is executed.
func loadScheduleToRun(path string) (*schedules.Schedule, error) {
	s, err := schedules.LoadChecked(path)
	var se *schedules.StaticError
	switch {
	case errors.As(err, &se):
		return nil, &exitError{code: 1, msg: fmt.Sprintf("--schedule %s: %v (see 'tetris-hil verify')", path, err)}
	case err != nil:
		return nil, usagef("--schedule %q: %v", path, err)
	}
	return s, nil
}
