package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// memoryFlag is --max-memory: the limit on a run's estimated peak memory.
type memoryFlag struct{ value string }

func (m *memoryFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&m.value, "max-memory", "auto",
		"refuse, before planning, a run whose estimated peak memory is above this (e.g. 4GiB), run fewer at once when together they would be, and keep the heap under it; auto: half of physical memory, at most 7/8 of the cgroup's memory limit (a container, a Slurm job); 0: no limit")
}

// apply returns the limit in bytes (0: none) and makes it the runtime's soft memory limit too
// (softMemoryLimit): a command that reads the flag keeps its heap under what it refuses above.
func (m *memoryFlag) apply() (int64, error) {
	var b int64
	if m.value == "auto" {
		b = autoMemoryLimit(physicalMemory(), cgroupLimit())
	} else {
		var err error
		if b, err = units.ParseBytes(m.value); err != nil {
			return 0, usagef("--max-memory %q: %v", m.value, err)
		}
	}
	softMemoryLimit(b)
	return b, nil
}

// autoMemoryLimit is --max-memory auto for a machine of physical bytes (0: unknown) in a cgroup
// limited to cgroup bytes (0: none): half the machine, which leaves the rest to whoever shares
// it, but no more than seven eighths of the cgroup's limit. A cgroup's memory (a container, a
// Slurm job's --mem, a systemd slice) is the process's own, and the kernel kills a process above
// it however much the machine has. 0: no limit known.
func autoMemoryLimit(physical, cgroup int64) int64 {
	limit := physical / 2
	if c := cgroup - cgroup/8; cgroup > 0 && (limit == 0 || c < limit) {
		limit = c
	}
	return limit
}

// cgroupLimit is this process's cgroup memory limit (0: none).
func cgroupLimit() int64 {
	self, _ := os.ReadFile("/proc/self/cgroup")
	return cgroupMemoryLimit("/sys/fs/cgroup", string(self))
}

// physicalMemory is MemTotal from /proc/meminfo, or 0 (no limit) where there is none.
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupMemoryLimit is the lowest memory limit among the cgroups that /proc/self/cgroup (self)
// names under root (the cgroup file systems' mount point), for cgroup v2 (memory.max) and v1
// (memory/memory.limit_in_bytes), each read at the mount's top (what a container sees of its
// own cgroup) and at every cgroup on the process's path; 0 when none is set.
func cgroupMemoryLimit(root, self string) int64 {
	files := []string{root + "/memory.max", root + "/memory/memory.limit_in_bytes"}
	for _, line := range strings.Split(self, "\n") {
		// hierarchy-ID:controllers:path; v2's controllers are empty.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[2] == "/" || strings.Contains(parts[2], "..") {
			continue
		}
		dir, file := "", ""
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, file = root, "/memory.max"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			dir, file = root+"/memory", "/memory.limit_in_bytes"
		default:
			continue
		}
		// The process's cgroup and every one above it: a limit anywhere on the way applies.
		path := ""
		for _, name := range strings.Split(strings.Trim(parts[2], "/"), "/") {
			path += "/" + name
			files = append(files, dir+path+file)
		}
	}
	limit := int64(0)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// "max" (v2) and v1's page-rounded 2^63 mean no limit.
		if err != nil || v <= 0 || v >= 1<<62 {
			continue
		}
		if limit == 0 || v < limit {
			limit = v
		}
	}
	return limit
}

// softMemoryLimit makes limit (bytes; 0: none), less a sixteenth, the runtime's soft memory
// limit, as GOMEMLIMIT would, unless GOMEMLIMIT is set: without it the garbage collector lets the
// heap grow to about twice what is live before it collects, so a run the estimate lets through
// could still hold twice its estimate. The sixteenth is room for what the runtime does not count
// and the resident set does (the binary, C libraries such as NVML, pages freed but not yet
// returned), so that the process's peak resident set stays under the limit. The limit only
// changes when the collector runs, never a result.
func softMemoryLimit(limit int64) {
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit - limit/16)
	}
}

// memoryRefusal turns an experiment refused for its memory estimate into one line that says what
// to change; other errors pass through.
func memoryRefusal(err error) error {
	var me *experiment.MemoryError
	if errors.As(err, &me) {
		return &exitError{code: 1, msg: fmt.Sprintf("refused before planning: %v; raise --max-memory or leave those algorithms out", me)}
	}
	return err
}
