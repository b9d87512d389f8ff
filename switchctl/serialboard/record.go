package serialboard

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Record wraps a port and keeps a transcript of the session in the style of periph's conntest
// Record: "> line" for each line written, "< line" for each line read, in order. Replay it with
// Playback to test the protocol code without a device.
type Record struct {
	Port io.ReadWriteCloser

	mu      sync.Mutex
	lines   []string
	pending []byte
}

func (r *Record) Write(b []byte) (int, error) {
	// Recorded before writing: the reply can be read before Write returns.
	r.mu.Lock()
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			r.lines = append(r.lines, "> "+strings.TrimSuffix(l, "\n"))
		}
	}
	r.mu.Unlock()
	return r.Port.Write(b)
}

func (r *Record) Read(b []byte) (int, error) {
	n, err := r.Port.Read(b)
	r.mu.Lock()
	r.pending = append(r.pending, b[:n]...)
	for {
		i := bytes.IndexByte(r.pending, '\n')
		if i < 0 {
			break
		}
		r.lines = append(r.lines, fmt.Sprintf("< %s", r.pending[:i]))
		r.pending = r.pending[i+1:]
	}
	r.mu.Unlock()
	return n, err
}

// Close closes the port.
func (r *Record) Close() error { return r.Port.Close() }

// Transcript is the session so far, one line each.
func (r *Record) Transcript() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n") + "\n"
}

// Playback is a port that plays a transcript back: each written line must be the next "> "
// line, and the "< " lines that follow it are then read back. A write that differs is an
// error naming both lines (the playback port's Read then ends too).
type Playback struct {
	mu     sync.Mutex
	cond   *sync.Cond
	script []string
	pos    int
	out    bytes.Buffer
	err    error
	closed bool
}

// NewPlayback reads a transcript.
func NewPlayback(transcript string) *Playback {
	p := &Playback{}
	p.cond = sync.NewCond(&p.mu)
	sc := bufio.NewScanner(strings.NewReader(transcript))
	for sc.Scan() {
		if sc.Text() != "" {
			p.script = append(p.script, sc.Text())
		}
	}
	p.queueReplies()
	return p
}

// queueReplies moves the "< " lines at the current position to the read buffer.
func (p *Playback) queueReplies() {
	for p.pos < len(p.script) && strings.HasPrefix(p.script[p.pos], "< ") {
		p.out.WriteString(p.script[p.pos][2:] + "\n")
		p.pos++
	}
}

func (p *Playback) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return 0, p.err
	}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimSuffix(l, "\n")
		if p.pos >= len(p.script) {
			p.err = fmt.Errorf("playback: wrote %q after the end of the transcript", l)
		} else if want := p.script[p.pos]; want != "> "+l {
			p.err = fmt.Errorf("playback: line %d: wrote %q, transcript has %q", p.pos+1, l, want)
		}
		if p.err != nil {
			p.cond.Broadcast()
			return 0, p.err
		}
		p.pos++
		p.queueReplies()
	}
	p.cond.Broadcast()
	return len(b), nil
}

// Read blocks until a reply is queued, the port is closed or playback failed.
func (p *Playback) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.out.Len() == 0 && !p.closed && p.err == nil {
		p.cond.Wait()
	}
	if p.out.Len() > 0 {
		return p.out.Read(b)
	}
	if p.err != nil {
		return 0, p.err
	}
	return 0, io.EOF
}

// Close ends playback.
func (p *Playback) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.cond.Broadcast()
	return nil
}

// Err is the first mismatch, or an error if the transcript was not played to its end.
func (p *Playback) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if p.pos < len(p.script) {
		return fmt.Errorf("playback: stopped at line %d of %d (%q)", p.pos+1, len(p.script), p.script[p.pos])
	}
	return nil
}
