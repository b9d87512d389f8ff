//go:build race

package serialboard_test

// raceEnabled: under the race detector every goroutine runs several times slower.
const raceEnabled = true
