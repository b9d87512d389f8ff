//go:build !linux

package hil

import "fmt"

// Renice is only implemented on Linux, where each thread has its own niceness.
func Renice(nice int) error {
	return fmt.Errorf("hil: renice to %d: not supported on this system", nice)
}
