//go:build !unix

package schedules_test

// cpuSeconds is unknown off Unix; BenchmarkVerify then reports wall time only.
func cpuSeconds() float64 { return 0 }
