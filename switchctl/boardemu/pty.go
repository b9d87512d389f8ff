package boardemu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// PTY runs a board on a pseudo-terminal. Its Path is the device a client opens (with
// tarm/serial, as a real port).
type PTY struct {
	Path   string
	board  *Board
	master *os.File
	done   chan struct{}
	err    error
	cancel context.CancelFunc
	// open is whether the emulator counts a client as connected now (set at its first read of a
	// connection, cleared when it sees the port closed).
	open atomic.Bool
}

// StartPTY opens a pseudo-terminal and serves b on it until ctx is done or Close. A client
// opening the device counts as a connection (a reset, if configured); closing it, as the end of
// one. The emulator notices a close at its next read of the master (which fails with EIO while
// no client has the device open): a client that closes and reopens while the board is busy
// with a line is seen as one connection.
func StartPTY(ctx context.Context, b *Board) (*PTY, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("board emulator: open a pseudo-terminal: %w", err)
	}
	// Raw from the start, so nothing the board writes is echoed back before the client has set
	// its own modes.
	if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
		master.Close()
		slave.Close()
		return nil, fmt.Errorf("board emulator: raw mode on %s: %w", slave.Name(), err)
	}
	if master, err = pollable(master); err != nil {
		slave.Close()
		return nil, fmt.Errorf("board emulator: %s: %w", slave.Name(), err)
	}
	p := &PTY{Path: slave.Name(), board: b, master: master, done: make(chan struct{})}
	// With no slave open, reads on the master fail with EIO: that is how the board sees that
	// no client has the port open.
	slave.Close()
	ctx, p.cancel = context.WithCancel(ctx)
	go func() {
		defer close(p.done)
		p.err = p.serve(ctx)
	}()
	go func() {
		<-ctx.Done()
		master.Close()
	}()
	return p, nil
}

// pollable returns the master as a non-blocking file that Go's poller waits on. pty.Open hands
// it over in blocking mode (its ioctls go through Fd), and a blocking read of a master whose
// client keeps the port open and silent never returns: closing the file does not interrupt it,
// so Close waited on serve for ever (a test hung for 47 minutes under the race detector). On the
// poller, closing the file ends the read at once.
func pollable(master *os.File) (*os.File, error) {
	fd, err := syscall.Dup(int(master.Fd()))
	master.Close()
	if err != nil {
		return nil, fmt.Errorf("duplicating the pseudo-terminal's master: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("non-blocking pseudo-terminal master: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

func (p *PTY) serve(ctx context.Context) error {
	buf := make([]byte, 512)
	var pending []byte
	connected := false
	for {
		n, err := p.master.Read(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if errors.Is(err, syscall.EIO) {
				// No client (or it closed the port): wait for the next open.
				connected, pending = false, pending[:0]
				p.open.Store(false)
				time.Sleep(2 * time.Millisecond)
				continue
			}
			return fmt.Errorf("board emulator %s: %w", p.Path, err)
		}
		if !connected {
			connected = true
			p.open.Store(true)
			p.board.connect(p.master)
		}
		pending = append(pending, buf[:n]...)
		for {
			i := strings.IndexByte(string(pending), '\n')
			if i < 0 {
				break
			}
			line := strings.TrimRight(string(pending[:i]), "\r")
			pending = pending[i+1:]
			p.board.handleLine(ctx, line, p.master)
		}
		if len(pending) > 64*1024 {
			pending = pending[:0]
		}
	}
}

// Connected reports whether the emulator counts a client as connected: true from the client's
// first line until the emulator has seen the port closed. A test that reopens the port waits
// for false first, so that the reopening is seen as a new connection (a reset) whatever the
// machine's load, instead of sleeping and hoping.
func (p *PTY) Connected() bool { return p.open.Load() }

// Board is the board served.
func (p *PTY) Board() *Board { return p.board }

// Close stops serving and closes the pseudo-terminal.
func (p *PTY) Close() error {
	p.cancel()
	<-p.done
	return p.err
}

// Done is closed when the emulator has stopped.
func (p *PTY) Done() <-chan struct{} { return p.done }
