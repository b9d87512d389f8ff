//go:build unix

package safefile

import (
	"bufio"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var umaskMu sync.Mutex

// currentUmask reads the process umask. Linux reports it in /proc/self/status; elsewhere the only
// way to read it is to set it, so that read is serialised and the value put back at once.
func currentUmask() fs.FileMode {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m)
				}
			}
		}
	}
	umaskMu.Lock()
	defer umaskMu.Unlock()
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}
