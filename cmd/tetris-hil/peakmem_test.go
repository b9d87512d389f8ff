package main

import (
	"bufio"
	"os"
	"strings"
)

// envHWMFile names the file a child CLI process (the test binary in cliRole) writes its peak
// resident memory to at exit, in KiB: VmHWM from /proc/self/status, which belongs to the
// process's own address space after exec and so, unlike ru_maxrss, leaves out the parent's.
const envHWMFile = "TETRIS_HIL_TEST_HWM_FILE"

func writePeakMemory(path string) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			_ = os.WriteFile(path, []byte(strings.TrimSuffix(strings.TrimSpace(v), " kB")), 0o644)
			return
		}
	}
}
