package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCgroupMemoryLimit reads the limits a container, a Slurm job or a systemd slice sets, in
// both cgroup versions, and takes the lowest.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		self  string
		want  int64
	}{
		{"none", nil, "0::/\n", 0},
		{"v2 container: the mount's top", map[string]string{"memory.max": "3221225472\n"}, "0::/\n", 3 << 30},
		{"v2 unlimited", map[string]string{"memory.max": "max\n"}, "0::/\n", 0},
		{"v2 job below an unlimited top", map[string]string{"memory.max": "max\n", "slurm/job_7/memory.max": "2147483648\n"}, "0::/slurm/job_7\n", 2 << 30},
		{"v2 the lower of two", map[string]string{"memory.max": "1073741824", "user.slice/memory.max": "4294967296"}, "0::/user.slice\n", 1 << 30},
		{"v1 unlimited", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, "4:memory:/\n", 0},
		{"v1 job", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n", "memory/slurm/uid_0/job_3/memory.limit_in_bytes": "536870912\n"},
			"7:cpuset:/slurm\n4:memory:/slurm/uid_0/job_3\n1:name=systemd:/\n", 512 << 20},
		{"v2 a limit on a parent", map[string]string{"user.slice/memory.max": "8388608", "user.slice/session-1.scope/memory.max": "max"}, "0::/user.slice/session-1.scope\n", 8 << 20},
		{"v1 joined controllers", map[string]string{"memory/a/memory.limit_in_bytes": "1048576"}, "3:cpu,memory:/a\n", 1 << 20},
		{"garbage is ignored", map[string]string{"memory.max": "lots\n", "x/memory.max": "-5"}, "0::/x\n", 0},
		{"a path that climbs out is not followed", map[string]string{"memory.max": "max"}, "0::/../../etc\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := cgroupMemoryLimit(root, tc.self); got != tc.want {
				t.Errorf("cgroupMemoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestAutoMemoryLimit: half the machine, at most seven eighths of a cgroup's limit.
func TestAutoMemoryLimit(t *testing.T) {
	for _, tc := range []struct{ physical, cgroup, want int64 }{
		{64 << 30, 0, 32 << 30},
		{64 << 30, 4 << 30, 3584 << 20},
		{4 << 30, 64 << 30, 2 << 30},
		{0, 8 << 30, 7 << 30},
		{0, 0, 0},
	} {
		if got := autoMemoryLimit(tc.physical, tc.cgroup); got != tc.want {
			t.Errorf("autoMemoryLimit(%d, %d) = %d, want %d", tc.physical, tc.cgroup, got, tc.want)
		}
	}
}
