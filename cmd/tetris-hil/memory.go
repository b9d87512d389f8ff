package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
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
		"refuse, before planning, a run whose estimated peak memory is above this (e.g. 4GiB), run fewer at once when together they would be, and keep the heap under it; auto: half of physical memory; 0: no limit")
}

// limit is the limit in bytes (0: none).
func (m *memoryFlag) limit() (int64, error) {
	if m.value == "auto" {
		return physicalMemory() / 2, nil
	}
	b, err := units.ParseBytes(m.value)
	if err != nil {
		return 0, usagef("--max-memory %q: %v", m.value, err)
	}
	return b, nil
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

// softMemoryLimit makes limit (bytes; 0: none) the runtime's soft memory limit, as GOMEMLIMIT
// would, unless GOMEMLIMIT is set: without it the garbage collector lets the heap grow to about
// twice what is live before it collects, so a run the estimate lets through could still hold
// twice its estimate. The limit only changes when the collector runs, never a result.
func softMemoryLimit(limit int64) {
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
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
