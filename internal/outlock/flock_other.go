//go:build !unix

package outlock

import "os"

// Without flock the lock file's pid is all there is: a live pid in it holds the lock.
const flockSupported = false

func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}

// alive cannot tell without a platform call; a lock file is taken as live only while its
// holder's process can be found.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}
