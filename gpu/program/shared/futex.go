package shared

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A process with nothing to do but wait for another's flag sleeps on the generation word
// instead of spinning, so that the processes that have work get the CPUs: on a machine with
// fewer cores than spinning processes, spinners starve each other. The futex is not the
// process-private kind: the word lives in a MAP_SHARED file, and the kernel keys the wait on
// the file page, which every mapping shares.
const (
	futexWait = 0
	futexWake = 1
)

// Generation is the count of flags written so far (wrapping).
func (m *Mem) Generation() uint32 { return m.load32(offGen) }

// bump counts a flag written and wakes the sleepers, if any.
func (m *Mem) bump() {
	atomic.AddUint32(m.u32(offGen), 1)
	if m.load32(offWaiters) > 0 {
		_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(m.u32(offGen))), futexWake, 1<<30, 0, 0, 0)
	}
}

// Sleep waits until the generation differs from gen (a flag was written since the caller read
// it), or for at most d.
func (m *Mem) Sleep(gen uint32, d time.Duration) {
	atomic.AddUint32(m.u32(offWaiters), 1)
	defer atomic.AddUint32(m.u32(offWaiters), ^uint32(0))
	if m.Generation() != gen {
		return
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(m.u32(offGen))), futexWait, uintptr(gen), uintptr(unsafe.Pointer(&ts)), 0, 0)
}
