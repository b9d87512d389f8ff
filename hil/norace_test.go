//go:build !race

package hil

const raceEnabled = false
