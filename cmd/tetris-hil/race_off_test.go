//go:build !race

package main

// raceEnabled: the race detector multiplies a process's memory, so memory measurements skip.
const raceEnabled = false
