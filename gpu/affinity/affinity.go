// Package affinity is about which CPUs a process may run on: CPU sets in the kernel's list format,
// starting a child process from an OS thread pinned to a set (so the child is pinned from birth,
// before its first instruction), and checking that every thread of a process has the set it
// should have.
//
// Pinning from birth matters because NVML's SetCpuAffinity binds only the calling thread: pinning
// a worker after it started would leave the threads its runtime already created on other CPUs.
package affinity

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Set is a set of CPU numbers, sorted ascending without duplicates.
type Set []int

// Parse reads the kernel's list format ("0-3,8,10-11", as in Cpus_allowed_list); the empty string
// is the empty set.
func Parse(list string) (Set, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return Set{}, nil
	}
	var s Set
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", list, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", list, part)
			}
		}
		for c := a; c <= b; c++ {
			s = append(s, c)
		}
	}
	return normalize(s), nil
}

// Of returns the set of the given CPUs.
func Of(cpus ...int) Set { return normalize(slices.Clone(cpus)) }

func normalize(s Set) Set {
	slices.Sort(s)
	return slices.Compact(s)
}

// FromMask reads a bitmask given as machine words, least significant word first, as NVML's
// GetCpuAffinity returns it.
func FromMask(words []uint, bitsPerWord int) Set {
	s := Set{}
	for w, word := range words {
		for b := 0; b < bitsPerWord; b++ {
			if word&(1<<uint(b)) != 0 {
				s = append(s, w*bitsPerWord+b)
			}
		}
	}
	return s
}

// Mask is the inverse of FromMask.
func (s Set) Mask(bitsPerWord int) []uint {
	if len(s) == 0 {
		return nil
	}
	words := make([]uint, s[len(s)-1]/bitsPerWord+1)
	for _, c := range s {
		words[c/bitsPerWord] |= 1 << uint(c%bitsPerWord)
	}
	return words
}

// String is the kernel's list format with ranges collapsed ("0-3,8").
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Intersect returns the CPUs in both sets.
func (s Set) Intersect(o Set) Set {
	out := Set{}
	for _, c := range s {
		if _, ok := slices.BinarySearch(o, c); ok {
			out = append(out, c)
		}
	}
	return out
}

// Equal reports whether both sets hold the same CPUs.
func (s Set) Equal(o Set) bool { return slices.Equal(s, o) }

// Thread returns the CPU set of the calling OS thread. Callers that care which thread that is must
// have locked it (runtime.LockOSThread).
func Thread() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	s := Set{}
	for c := 0; c < len(m)*64; c++ {
		if m.IsSet(c) {
			s = append(s, c)
		}
	}
	return s, nil
}

// SetThread binds the calling OS thread to s. The caller must have locked the thread.
func SetThread(s Set) error {
	if len(s) == 0 {
		return errors.New("sched_setaffinity: empty cpu set")
	}
	var m unix.CPUSet
	for _, c := range s {
		m.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &m); err != nil {
		return fmt.Errorf("sched_setaffinity %s: %w", s, err)
	}
	return nil
}

// Available is the set this process may use (its own affinity, which cgroups and taskset limit):
// any mask applied to a thread is cut down to it by the kernel.
func Available() (Set, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return Thread()
}

// StartPinned runs start on an OS thread that pin has bound to some CPUs, so that a child process
// forked by start inherits that binding from birth; then it restores the thread. start receives
// the set the thread has after pin (the kernel may have cut it down), so it can tell the child
// what to expect; StartPinned returns that set.
//
// pin must bind the calling thread (as NVML's SetCpuAffinity does). The work runs on a fresh
// goroutine locked to its thread: if restoring fails, that goroutine exits still locked and the Go
// runtime discards the thread rather than reuse a pinned one. Threads the runtime creates while
// the goroutine is locked come from its template thread, not this one, so they are not pinned.
func StartPinned(pin func() error, start func(applied Set) error) (Set, error) {
	type result struct {
		set Set
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		saved, err := Thread()
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		pinErr := pin()
		var applied Set
		var startErr error
		if pinErr == nil {
			if applied, startErr = Thread(); startErr == nil {
				startErr = start(applied)
			}
		}
		if err := SetThread(saved); err != nil {
			// Exiting while locked retires the thread.
			done <- result{applied, errors.Join(pinErr, startErr, fmt.Errorf("restoring thread affinity: %w", err))}
			return
		}
		runtime.UnlockOSThread()
		switch {
		case pinErr != nil:
			done <- result{err: fmt.Errorf("pinning: %w", pinErr)}
		case startErr != nil:
			done <- result{err: startErr}
		default:
			done <- result{set: applied}
		}
	}()
	r := <-done
	return r.set, r.err
}

// ThreadMismatch is one thread whose allowed CPUs differ from what was wanted.
type ThreadMismatch struct {
	TID int
	Got Set
}

// MismatchError lists the threads of a process that are not on the wanted set.
type MismatchError struct {
	Want    Set
	Threads []ThreadMismatch
	Checked int
}

func (e *MismatchError) Error() string {
	parts := make([]string, len(e.Threads))
	for i, t := range e.Threads {
		parts[i] = fmt.Sprintf("thread %d on %s", t.TID, t.Got)
	}
	return fmt.Sprintf("%d of %d threads not on cpus %s: %s", len(e.Threads), e.Checked, e.Want, strings.Join(parts, "; "))
}

// CheckThreads reads Cpus_allowed_list of every thread under procDir/task (procDir is
// /proc/self for the calling process) and returns how many threads it checked, or a
// *MismatchError naming the threads whose set is not want.
func CheckThreads(procDir string, want Set) (int, error) {
	tasks, err := os.ReadDir(filepath.Join(procDir, "task"))
	if err != nil {
		return 0, fmt.Errorf("listing threads: %w", err)
	}
	mm := &MismatchError{Want: want}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		path := filepath.Join(procDir, "task", t.Name(), "status")
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended between listing and reading
		}
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", path, err)
		}
		got, err := allowedList(data)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		mm.Checked++
		if !got.Equal(want) {
			mm.Threads = append(mm.Threads, ThreadMismatch{TID: tid, Got: got})
		}
	}
	if mm.Checked == 0 {
		return 0, fmt.Errorf("no threads found under %s", filepath.Join(procDir, "task"))
	}
	if len(mm.Threads) > 0 {
		return mm.Checked, mm
	}
	return mm.Checked, nil
}

func allowedList(status []byte) (Set, error) {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return Parse(v)
		}
	}
	return nil, errors.New("no Cpus_allowed_list field")
}
