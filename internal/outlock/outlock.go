// Package outlock gives one run at a time an output directory or file. Two runs writing the same
// outputs at once interleave them: one's cleanup deletes the other's plots, one's finish deletes
// the other's partial file. A run takes the lock before it writes anything and holds it to the
// end; a second run is refused with the holder's pid and command line.
//
// The lock is a file (DirLockName inside a directory; ".NAME.lock" beside a file) holding the
// holder's pid, start time and command. On Unix it is also held with flock(2), which the kernel
// drops when the holder dies however it dies; a lock file left by a killed run (its pid no longer
// running, its flock gone) is taken over, and Acquire says so.
package outlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DirLockName is the lock file's name inside a locked directory.
const DirLockName = ".tetris-hil.lock"

// ErrHeld is wrapped by the error Acquire returns when another live run holds the lock.
var ErrHeld = errors.New("in use by another run")

// Lock is a held lock; Release gives it up.
type Lock struct {
	path string
	f    *os.File
	// TookOver describes the stale lock this one replaced ("" if none): the dead holder's pid
	// and command, for the caller to tell the user.
	TookOver string
}

// Holder is what a lock file says of the run that holds it.
type Holder struct {
	PID     int
	Started string
	Command string
}

func (h Holder) String() string {
	s := "pid " + strconv.Itoa(h.PID)
	if h.Command != "" {
		s += " (" + h.Command + ")"
	}
	if h.Started != "" {
		s += ", started " + h.Started
	}
	return s
}

// PathFor is the lock file of target: DirLockName inside it when dir is true, else ".NAME.lock"
// beside it.
func PathFor(target string, dir bool) string {
	if dir {
		return filepath.Join(target, DirLockName)
	}
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".lock")
}

// Dir locks the directory dir (which must exist) for this process, as command.
func Dir(dir, command string) (*Lock, error) { return acquire(dir, PathFor(dir, true), command) }

// File locks the output file path (whose directory must exist) for this process, as command.
func File(path, command string) (*Lock, error) { return acquire(path, PathFor(path, false), command) }

// acquire takes the lock file at lockPath for target; see the package doc.
func acquire(target, lockPath, command string) (*Lock, error) {
	for tries := 0; ; tries++ {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", target, err)
		}
		prev := readHolder(f)
		locked, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", target, err)
		}
		if !locked || (prev.PID > 0 && prev.PID != os.Getpid() && alive(prev.PID) && !flockSupported) {
			f.Close()
			return nil, fmt.Errorf("%s is %w: %s; wait for it to finish, or give another output",
				target, ErrHeld, prev)
		}
		// The file may have been removed (its holder released it) between our open and our
		// lock: then we hold a lock on a name no one else sees. Start again on the new file.
		if !samePath(f, lockPath) {
			unlock(f)
			f.Close()
			if tries > 10 {
				return nil, fmt.Errorf("locking %s: %s keeps changing", target, lockPath)
			}
			continue
		}
		l := &Lock{path: lockPath, f: f}
		if prev.PID > 0 {
			l.TookOver = fmt.Sprintf("took over the stale lock %s of %s, which is no longer running", lockPath, prev)
		}
		me := Holder{PID: os.Getpid(), Started: time.Now().UTC().Format(time.RFC3339), Command: command}
		if err := writeHolder(f, me); err != nil {
			l.Release()
			return nil, fmt.Errorf("locking %s: %w", target, err)
		}
		return l, nil
	}
}

// Release removes the lock file and gives up the lock. It is safe to call more than once and on
// a nil Lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path) // removed while held, so no other run is between its open and its lock
	unlock(l.f)
	l.f.Close()
	l.f = nil
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

func samePath(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// The lock file is three lines: pid, start time, command.
func readHolder(f *os.File) Holder {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	lines := strings.SplitN(string(b[:n]), "\n", 4)
	var h Holder
	if len(lines) > 0 {
		h.PID, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	}
	if len(lines) > 1 {
		h.Started = strings.TrimSpace(lines[1])
	}
	if len(lines) > 2 {
		h.Command = strings.TrimSpace(lines[2])
	}
	return h
}

func writeHolder(f *os.File, h Holder) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(fmt.Sprintf("%d\n%s\n%s\n", h.PID, h.Started, h.Command)), 0)
	if err != nil {
		return err
	}
	return f.Sync()
}

// Read reports who holds the lock of target (dir says whether it is a directory); ok is false
// when no lock file is there.
func Read(target string, dir bool) (h Holder, ok bool) {
	f, err := os.Open(PathFor(target, dir))
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	return readHolder(f), true
}
