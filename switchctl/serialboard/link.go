package serialboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Link is a line-based request/reply link over a serial port: one exchange at a time, replies
// checked, garbled or missing replies retried a bounded number of times.
//
// A reader goroutine owns the port's reads. tarm/serial always has a read timeout here (in
// tenths of a second): an empty read means the timeout passed with no data yet, not the end of
// the stream, and it lets the reader notice Close within one timeout. A port whose empty reads
// come back at once has hung up.
type Link struct {
	name         string
	port         io.ReadWriteCloser
	readTimeout  time.Duration // 0: the port has no read timeout; an empty read is the end
	replyTimeout time.Duration
	retries      int
	trace        func(port, command, reply string, took time.Duration, err error)

	lines   chan line
	done    chan struct{} // closed when the reader has stopped; readErr says why
	readErr error

	closing   chan struct{} // closed by abort: exchanges in flight give up
	stopping  chan struct{} // closed by Close: the reader stops
	closeOnce sync.Once
	mu        sync.Mutex // one exchange at a time
	// staleUntil: an exchange gave up waiting (cancelled or closed) after sending, so until
	// then its reply may still arrive and must not be taken for the next command's.
	staleUntil time.Time
}

// NewLink starts a link over port. readTimeout is the port's read timeout (0 for transports
// that block until data or close, e.g. a pipe); a reply may pause for up to one read timeout,
// so an exchange waits 2·readTimeout + extra for its reply (extra: the settle time of commands
// the board answers once settled), or extra + 1s without a read timeout.
func NewLink(name string, port io.ReadWriteCloser, readTimeout time.Duration, retries int) *Link {
	l := &Link{name: name, port: port, readTimeout: readTimeout, retries: retries,
		lines: make(chan line, 64), done: make(chan struct{}), closing: make(chan struct{}), stopping: make(chan struct{})}
	l.replyTimeout = 2 * readTimeout
	if readTimeout == 0 {
		l.replyTimeout = time.Second
	}
	go l.read()
	return l
}

// line is a received line and when its end arrived: timestamped by the reader, so the time a
// reply came back does not include handing it to the goroutine waiting for it.
type line struct {
	s  string
	at time.Time
}

func (l *Link) read() {
	defer close(l.done)
	buf := make([]byte, 512)
	var buffered []byte
	quick := 0
	for {
		t0 := time.Now()
		n, err := l.port.Read(buf)
		select {
		case <-l.stopping:
			if n == 0 {
				l.readErr = switchctl.ErrClosed
				return
			}
		default:
		}
		for _, b := range buf[:n] {
			switch {
			case b == '\n':
				s := string(buffered)
				if len(s) > 0 && s[len(s)-1] == '\r' {
					s = s[:len(s)-1]
				}
				buffered = buffered[:0]
				select {
				case l.lines <- line{s, time.Now()}:
				case <-l.stopping:
					l.readErr = switchctl.ErrClosed
					return
				}
			case len(buffered) < 4*MaxLine:
				buffered = append(buffered, b)
			}
		}
		if n > 0 {
			quick = 0
			continue
		}
		if err == nil || errors.Is(err, io.EOF) {
			if l.readTimeout == 0 {
				l.readErr = fmt.Errorf("serial %s: the port was closed at the other end", l.name)
				return
			}
			// No data within the read timeout. Three empty reads in a row that returned well
			// before it are a hangup (the device is gone), not silence.
			if time.Since(t0) < l.readTimeout/2 {
				if quick++; quick >= 3 {
					l.readErr = fmt.Errorf("serial %s: the port hung up (empty reads return at once)", l.name)
					return
				}
			} else {
				quick = 0
			}
			continue
		}
		l.readErr = fmt.Errorf("serial %s: read: %w", l.name, err)
		return
	}
}

// drain drops replies nobody waits for (late replies to an earlier try).
func (l *Link) drain() {
	for {
		select {
		case <-l.lines:
		default:
			return
		}
	}
}

// skipStale waits for the reply of an exchange that was abandoned after sending (one command,
// one reply), up to the time that reply could take, and discards it.
func (l *Link) skipStale(ctx context.Context) {
	if l.staleUntil.IsZero() {
		return
	}
	d := time.Until(l.staleUntil)
	l.staleUntil = time.Time{}
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.lines:
	case <-t.C:
	case <-l.done:
	case <-ctx.Done():
	}
}

// exchange sends cmd and waits for a reply that valid accepts, trying up to tries times.
// valid == nil sends without waiting. final exchanges (the safe state sent by Close) are not
// aborted by Close.
func (l *Link) exchange(ctx context.Context, cmd string, extra time.Duration, valid func(string) error, tries int, final bool) (reply string, sent, got time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.trace != nil {
		start := time.Now()
		defer func() { l.trace(l.name, cmd, reply, time.Since(start), err) }()
	}
	closing := l.closing
	if final {
		closing = nil
	}
	var last error
	for try := 0; try < tries; try++ {
		if err := ctx.Err(); err != nil {
			return "", sent, got, err
		}
		select {
		case <-closing:
			return "", sent, got, switchctl.ErrClosed
		case <-l.done:
			return "", sent, got, l.readErr
		default:
		}
		l.skipStale(ctx)
		l.drain()
		sent = time.Now()
		if _, err := io.WriteString(l.port, cmd+"\n"); err != nil {
			return "", sent, got, fmt.Errorf("serial %s: %q: write: %w", l.name, cmd, err)
		}
		if valid == nil {
			return "", sent, sent, nil
		}
		timer := time.NewTimer(l.replyTimeout + extra)
		select {
		case ln := <-l.lines:
			timer.Stop()
			s := ln.s
			got = ln.at
			if err := printable(s); err != nil {
				last = fmt.Errorf("garbled reply %q: %w", s, err)
				continue
			}
			if err := valid(s); err != nil {
				last = fmt.Errorf("garbled reply %q: %w", s, err)
				continue
			}
			return s, sent, got, nil
		case <-timer.C:
			last = fmt.Errorf("no reply within %v", l.replyTimeout+extra)
		case <-l.done:
			timer.Stop()
			return "", sent, got, l.readErr
		case <-ctx.Done():
			timer.Stop()
			l.staleUntil = sent.Add(l.replyTimeout + extra)
			return "", sent, got, ctx.Err()
		case <-closing:
			timer.Stop()
			l.staleUntil = sent.Add(l.replyTimeout + extra)
			return "", sent, got, switchctl.ErrClosed
		}
	}
	return "", sent, got, fmt.Errorf("serial %s: %q: no valid reply after %d tries (last: %w)", l.name, cmd, tries, last)
}

// Exchange sends cmd and returns the first reply valid accepts, retrying garbled or missing
// replies up to the link's retry count. extra lengthens the reply timeout.
func (l *Link) Exchange(ctx context.Context, cmd string, extra time.Duration, valid func(string) error) (string, error) {
	r, _, _, err := l.exchange(ctx, cmd, extra, valid, l.retries+1, false)
	return r, err
}

// abort makes every exchange in flight and every later one (except final ones) return
// ErrClosed.
func (l *Link) abort() { l.closeOnce.Do(func() { close(l.closing) }) }

// Close aborts any exchange in flight, closes the port and waits (bounded) for the reader to
// stop: with a read timeout it sees the close within one timeout.
func (l *Link) Close() error {
	l.abort()
	l.mu.Lock() // no exchange is writing now
	select {
	case <-l.stopping:
		l.mu.Unlock()
		return nil
	default:
	}
	close(l.stopping)
	err := l.port.Close()
	l.mu.Unlock()
	wait := 2*l.readTimeout + time.Second
	select {
	case <-l.done:
	case <-time.After(wait):
		return errors.Join(err, fmt.Errorf("serial %s: the reader did not stop within %v of Close", l.name, wait))
	}
	return err
}

// waitIdentity sends *IDN? once per reply timeout until a valid identity comes back or timeout
// passes. Boards that reset when the port opens ignore commands and print boot noise first;
// waiting for the identity replaces a fixed sleep.
func (l *Link) waitIdentity(ctx context.Context, timeout time.Duration) (Identity, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		r, _, _, err := l.exchange(ctx, "*IDN?", 0, func(s string) error { _, err := ParseIdentity(s); return err }, 1, false)
		if err == nil {
			id, _ := ParseIdentity(r)
			return id, nil
		}
		if ctx.Err() != nil || errors.Is(err, switchctl.ErrClosed) {
			return Identity{}, err
		}
		select {
		case <-l.done:
			return Identity{}, l.readErr
		default:
		}
		last = err
	}
	return Identity{}, fmt.Errorf("serial %s: no identity within %v of opening (last: %v)", l.name, timeout, last)
}
