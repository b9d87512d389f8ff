// Package readlimit is the one way an input file is read whole or streamed to its end: through a
// size limit per kind of file (a wiring map, a calibration, a demand, ...), refusing what is not
// a regular file (a FIFO, /dev/zero, a directory), and watching a context, so that no file can
// make a reader run out of memory, block forever or outlast a signal.
//
// The limits are the README's (Limits section); the CLI raises one with --max-input KIND=SIZE.
package readlimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/tetris-hil/tetris-hil/internal/units"
)

// Kind names a kind of input file; its limit is looked up by it.
type Kind string

// The kinds of file read whole (or to the end) and their default limits. A limit is far above
// any real file of the kind and far below what would strain a lab machine's memory. The wiring
// map's is the tightest: the YAML parser takes about 180 times a file's size and grows worse
// than linearly (1 MiB: 0.9 s, 190 MB; 4 MiB: 13 s, 760 MB), and a 1024-port map, the largest
// lab fabric in view, is 450 KB written one switch a line.
const (
	Wiring      Kind = "wiring"      // a switch wiring map (YAML)
	Calibration Kind = "calibration" // a calibration file
	Partial     Kind = "partial"     // a calibration's OUT.partial (--resume)
	Demand      Kind = "demand"      // a trace, CSV or .npy demand
	Shard       Kind = "shard"       // a sweep shard file (sweep merge)
	ReportJSON  Kind = "report-json" // a JSON file inside a report's run directory
	Image       Kind = "image"       // a PNG or SVG plot embedded by report
	Schedule    Kind = "schedule"    // a schedule file
	Timeline    Kind = "timeline"    // a run record or bare timeline
	Measured    Kind = "measured"    // a measured-times table (--measured)
	// The inputs of trace import that are not a demand matrix.
	Routing      Kind = "routing"       // a token-routing JSONL log (trace import --format routing-jsonl)
	ExpertCounts Kind = "expert-counts" // per-expert routing counts (trace import --format expert-counts)
	Placement    Kind = "placement"     // an expert placement file (trace import --placement FILE)
)

var defaults = map[Kind]int64{
	Wiring:      1 << 20,
	Calibration: 256 << 20,
	Partial:     256 << 20,
	Demand:      1 << 30,
	Shard:       256 << 20,
	ReportJSON:  256 << 20,
	Image:       8 << 20,
	// A schedule or timeline of millions of circuits (BvN on 256 ports: 16.6 M) runs to GBs.
	Schedule: 4 << 30,
	Timeline: 4 << 30,
	Measured: 256 << 20,
	// A routing log is held whole as one record per (token, layer) while the matrices are built:
	// a 1 GiB log of some 15 M records already takes a few GB.
	Routing:      1 << 30,
	ExpertCounts: 256 << 20,
	// A placement lists each expert's GPUs: kilobytes for any model in view.
	Placement: 16 << 20,
}

var (
	mu     sync.Mutex
	limits = map[Kind]int64{}
)

// ErrLimit is wrapped by the error for a file above its kind's limit. It is the same value as
// schedules.ErrLimit, so a file too large is bad input wherever it is caught.
var ErrLimit = errors.New("above the limit")

// ErrNotRegular is wrapped by the error for a FIFO, device, socket or directory where a file is
// read whole.
var ErrNotRegular = errors.New("not a regular file")

// Kinds returns every kind, sorted.
func Kinds() []Kind {
	ks := make([]Kind, 0, len(defaults))
	for k := range defaults {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// Default returns kind's default limit in bytes.
func Default(kind Kind) int64 { return defaults[kind] }

// Limit returns kind's limit in bytes: its default unless Set raised or lowered it.
func Limit(kind Kind) int64 {
	mu.Lock()
	defer mu.Unlock()
	if n, ok := limits[kind]; ok {
		return n
	}
	return defaults[kind]
}

// Set parses "KIND=SIZE" (SIZE with its unit: 64MiB, 2GB) and sets that kind's limit.
func Set(spec string) error {
	k, v, ok := strings.Cut(spec, "=")
	kind := Kind(strings.TrimSpace(k))
	if _, known := defaults[kind]; !ok || !known {
		return fmt.Errorf("%q: want KIND=SIZE with KIND one of %s", spec, kindList())
	}
	n, err := units.ParseBytes(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("%q: %w", spec, err)
	}
	if n <= 0 {
		return fmt.Errorf("%q: the size must be positive", spec)
	}
	mu.Lock()
	limits[kind] = n
	mu.Unlock()
	return nil
}

// Reset puts every limit back to its default (the CLI does so before applying its flags, so that
// one in-process run's --max-input does not carry into the next).
func Reset() {
	mu.Lock()
	limits = map[Kind]int64{}
	mu.Unlock()
}

func kindList() string {
	var s []string
	for _, k := range Kinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// LimitError says that a file is above its kind's limit.
type LimitError struct {
	Path  string
	Kind  Kind
	Size  int64 // the file's size, or -1 where it grew past the limit while read
	Limit int64
}

func (e *LimitError) Error() string {
	size := fmt.Sprintf("is %s", units.FormatBytes(e.Size))
	if e.Size < 0 {
		size = "grew while read"
	}
	return fmt.Sprintf("%s %s, above the limit of %s for input of kind %s (raise it with --max-input %s=SIZE)",
		e.Path, size, units.FormatBytes(e.Limit), e.Kind, e.Kind)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// File is an input file opened for reading: a regular file whose size was within its kind's
// limit when opened, read through a reader that stops at the limit and when the context ends.
type File struct {
	f    *os.File
	r    io.Reader
	Size int64
}

func (f *File) Read(p []byte) (int, error) { return f.r.Read(p) }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Open opens path as an input of kind: it refuses anything but a regular file (without blocking
// on a FIFO: the file is opened non-blocking and checked before any read) and a file above the
// kind's limit, stat first. Reads stop with ctx's error once ctx is done, and with a LimitError
// where the file grows past the limit.
func Open(ctx context.Context, path string, kind Kind) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = CheckInfo(path, kind, st)
	}
	if err == nil {
		// Back to blocking reads (a regular file never blocks; this keeps the Go runtime's
		// poller out of it).
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	limit := Limit(kind)
	return &File{f: f, Size: st.Size(), r: &limited{ctx: ctx, r: f, left: limit, err: &LimitError{path, kind, -1, limit}}}, nil
}

// CheckInfo refuses what st describes unless it is a regular file within kind's limit; a
// directory walk calls it on each entry before opening it.
func CheckInfo(path string, kind Kind, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s); input of kind %s is read whole", ErrNotRegular, describe(st.Mode()), kind)}
	}
	if limit := Limit(kind); st.Size() > limit {
		return &LimitError{path, kind, st.Size(), limit}
	}
	return nil
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}

// ReadFile reads path whole as an input of kind (see Open).
func ReadFile(ctx context.Context, path string, kind Kind) ([]byte, error) {
	f, err := Open(ctx, path, kind)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One byte more than the size, so that a file that grew is read to its end (and to the
	// limit at most) rather than cut at the size stat gave.
	b := make([]byte, 0, f.Size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Reader wraps r so that reads fail with ctx's error once ctx is done: a parser that reads as it
// goes then stops at a signal within one read.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	return &limited{ctx: ctx, r: r, left: -1}
}

// limited reads from r until ctx is done or left bytes are read (left < 0: no limit); one byte
// past the limit is err.
type limited struct {
	ctx  context.Context
	r    io.Reader
	left int64
	err  error
}

// chunk bounds one read, so that a parser reading a large buffer still looks at ctx often.
const chunk = 1 << 20

func (l *limited) Read(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, context.Cause(l.ctx)
	}
	if len(p) > chunk {
		p = p[:chunk]
	}
	if l.left >= 0 {
		if int64(len(p)) > l.left+1 {
			p = p[:l.left+1]
		}
	}
	n, err := l.r.Read(p)
	if l.left >= 0 {
		if int64(n) > l.left {
			return int(l.left), l.err
		}
		l.left -= int64(n)
	}
	return n, err
}
