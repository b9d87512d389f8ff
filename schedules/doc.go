// Package schedules holds the model everything else in tetris-hil works on: demand matrices, the
// Schedule type and its versioned JSON file, the Scheduler registry, lower bounds on completion
// time, and the verifier that every schedule (and every executed timeline) must pass.
//
// The fabric lives in the benes subpackage; schedulers live in their own subpackages and register
// themselves here, the way database/sql drivers do, so the CLI selects one by name.
package schedules
