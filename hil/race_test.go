//go:build race

package hil

// raceEnabled: under the race detector every goroutine runs several times slower, so the live
// timings are checked for validity only.
const raceEnabled = true
