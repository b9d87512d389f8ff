package main

// The schedulers register themselves with the schedules registry when imported; the CLI selects
// them by name (--algo).
import (
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/bff"
	_ "github.com/tetris-hil/tetris-hil/schedules/sunflow"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)
