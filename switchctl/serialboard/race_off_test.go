//go:build !race

package serialboard_test

const raceEnabled = false
