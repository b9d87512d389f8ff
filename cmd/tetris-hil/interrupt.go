package main

import "context"

// interruptible runs f on its own goroutine and returns its result, or ctx's error as soon as
// ctx is done, so that a computation that takes no context (the trace generator, encoding a
// large file) still stops at the first SIGINT or SIGTERM: the CLI then exits, abandoning the
// goroutine. Only work that writes nothing goes through here; files are written afterwards,
// each whole.
func interruptible[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
