// Package delay injects short delays precisely: the reconfiguration delays α_r that a live replay
// puts between a switch command and the transmission it unlocks (Tetris §4.1 injects the delays
// the scheduler incurs into a real execution).
//
// time.Sleep cannot do this: on Linux a sleep of 10 µs returns tens of microseconds to a
// millisecond late, depending on timer slack and load. An Injector sleeps only the part of a wait
// that lies above a threshold (where the scheduler's lateness is small against the wait) and
// spins on the monotonic clock, on a locked OS thread, for the rest. Deadlines are absolute, so
// the error of one wait does not carry into the next.
//
// SelfTest measures the error (actual wake-up minus deadline) for a set of delays and reports
// median, p99 and worst; `tetris-hil replay --selftest-delays` prints it.
package delay

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"time"
)

// DefaultSleepThreshold is the part of a wait that an Injector always spins: sleeps on a loaded
// Linux host overshoot by up to about a millisecond, so only the part of a wait above 2 ms is
// slept.
const DefaultSleepThreshold = 2 * time.Millisecond

// Injector waits until deadlines on the monotonic clock.
type Injector struct {
	// SleepThreshold: waits longer than this sleep until SleepThreshold before the deadline,
	// then spin. Zero means DefaultSleepThreshold; a negative value never sleeps.
	SleepThreshold time.Duration
}

func (in Injector) threshold() time.Duration {
	if in.SleepThreshold == 0 {
		return DefaultSleepThreshold
	}
	return in.SleepThreshold
}

// WaitUntil returns at the first instant at or after deadline (read from the monotonic clock
// carried by deadline), or when ctx is done, whichever is first. It returns the time it woke and
// ctx's error if the context ended the wait.
func (in Injector) WaitUntil(ctx context.Context, deadline time.Time) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Now(), err
	}
	if th := in.threshold(); th >= 0 {
		if rest := time.Until(deadline) - th; rest > 0 {
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return time.Now(), ctx.Err()
			}
		}
	}
	// The spin runs on one OS thread so that the goroutine is not moved between threads while it
	// reads the clock; the context is polled every 1024 reads (a few tens of microseconds).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	done := ctx.Done()
	for i := 0; ; i++ {
		now := time.Now()
		if !now.Before(deadline) {
			return now, nil
		}
		if i&1023 == 1023 {
			select {
			case <-done:
				return time.Now(), ctx.Err()
			default:
			}
		}
	}
}

// Wait waits d from now; see WaitUntil.
func (in Injector) Wait(ctx context.Context, d time.Duration) (time.Time, error) {
	return in.WaitUntil(ctx, time.Now().Add(d))
}

// Stats summarises the lateness of waits (actual wake-up minus deadline) for one requested delay.
type Stats struct {
	Requested time.Duration `json:"requested_ns"`
	Samples   int           `json:"samples"`
	Median    time.Duration `json:"median_error_ns"`
	P99       time.Duration `json:"p99_error_ns"`
	Worst     time.Duration `json:"worst_error_ns"`
}

// Summarise computes median, p99 and worst of lateness samples (it sorts them in place).
func Summarise(requested time.Duration, lateness []time.Duration) Stats {
	s := Stats{Requested: requested, Samples: len(lateness)}
	if len(lateness) == 0 {
		return s
	}
	sort.Slice(lateness, func(i, j int) bool { return lateness[i] < lateness[j] })
	s.Median = lateness[len(lateness)/2]
	s.P99 = lateness[(len(lateness)*99)/100]
	if (len(lateness)*99)/100 >= len(lateness) {
		s.P99 = lateness[len(lateness)-1]
	}
	s.Worst = lateness[len(lateness)-1]
	return s
}

// SelfTestDelays are the delays `replay --selftest-delays` measures: the reconfiguration delays of
// Tetris §4.2's sweeps, from a fast MEMS-free photonic switch to a mechanical one.
var SelfTestDelays = []time.Duration{10 * time.Nanosecond, time.Microsecond, 10 * time.Microsecond,
	100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond}

// SelfTest waits each delay reps times back to back and reports the lateness of each. Waits are
// timed from the instant the previous one returned, as in a replay where a completion unlocks the
// next reconfiguration. progress, if not nil, is called after each delay's batch.
func (in Injector) SelfTest(ctx context.Context, delays []time.Duration, reps int, progress func(done, total int)) ([]Stats, error) {
	if reps < 1 {
		return nil, fmt.Errorf("self-test repetitions: %d, want at least 1", reps)
	}
	out := make([]Stats, 0, len(delays))
	late := make([]time.Duration, reps)
	for k, d := range delays {
		if d < 0 {
			return out, fmt.Errorf("self-test delay %v is negative", d)
		}
		for i := range late {
			deadline := time.Now().Add(d)
			woke, err := in.WaitUntil(ctx, deadline)
			if err != nil {
				return out, err
			}
			late[i] = woke.Sub(deadline)
		}
		out = append(out, Summarise(d, late))
		if progress != nil {
			progress(k+1, len(delays))
		}
	}
	return out, nil
}

// Await is WaitUntil that also returns as soon as a value arrives on ch: the live runner's one
// wait, for the next deadline (an injected delay's end, a copy's end) or the next event from a
// worker or a switch controller, whichever comes first. One goroutine waits for everything, so
// only one thread ever spins. A zero deadline waits for ch (or ctx) alone. got says whether v came
// from ch; woke is when Await returned.
func Await[T any](ctx context.Context, in Injector, deadline time.Time, ch <-chan T) (v T, got bool, woke time.Time, err error) {
	done := ctx.Done()
	if err := ctx.Err(); err != nil {
		return v, false, time.Now(), err
	}
	if deadline.IsZero() {
		select {
		case v = <-ch:
			return v, true, time.Now(), nil
		case <-done:
			return v, false, time.Now(), ctx.Err()
		}
	}
	if th := in.threshold(); th >= 0 {
		if rest := time.Until(deadline) - th; rest > 0 {
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case v = <-ch:
				t.Stop()
				return v, true, time.Now(), nil
			case <-done:
				t.Stop()
				return v, false, time.Now(), ctx.Err()
			}
		}
	}
	// As in WaitUntil, the spin holds its thread and never yields (a locked thread that yields
	// hands its processor to another thread and back, at a thread wake-up each time): the live
	// runner gives the process enough processors for the others to run meanwhile.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; ; i++ {
		select {
		case v = <-ch:
			return v, true, time.Now(), nil
		default:
		}
		now := time.Now()
		if !now.Before(deadline) {
			return v, false, now, nil
		}
		if i&1023 == 1023 {
			select {
			case <-done:
				return v, false, time.Now(), ctx.Err()
			default:
			}
		}
	}
}
