//go:build unix

package emulator

import "syscall"

// cpuSeconds is the CPU time this process has used (user + system). Benchmarks report events
// per CPU second next to events per wall second because the CI machine is shared: wall time
// there includes time the benchmark spent waiting for a core.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
