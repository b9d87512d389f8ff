package hil

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Renice sets the scheduling niceness of every thread of this process to nice (−20, most
// favoured, to 19). A live replay measures time: on a shared machine, threads at a lower
// niceness than the others' keep their CPU when they become runnable, so that a copy's
// completion is seen and the next command sent within microseconds rather than after another
// process's time slice. Linux gives each thread its own niceness and a new thread its creator's,
// so every current thread is set, and the threads started later follow. Lowering niceness needs
// root or CAP_SYS_NICE; the error then says so and nothing is changed. Worker processes started
// afterwards inherit it.
func Renice(nice int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("hil: renice: %w", err)
	}
	var errs []error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("hil: renice to %d: %w (lowering niceness needs root or CAP_SYS_NICE)", nice, errs[0])
	}
	return nil
}
