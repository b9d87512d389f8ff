//go:build unix

package schedules_test

import "syscall"

// cpuSeconds is the CPU time this process has used (user + system). BenchmarkVerify reports CPU
// time per operation next to wall time because the machines it runs on are shared: wall time
// there includes time spent waiting for a core.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
