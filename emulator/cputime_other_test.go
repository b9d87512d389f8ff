//go:build !unix

package emulator

// cpuSeconds is unknown off Unix; benchmarks then report wall-clock rates only.
func cpuSeconds() float64 { return 0 }
