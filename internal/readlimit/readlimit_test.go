package readlimit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	t.Cleanup(Reset)
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("ports: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.yaml")
	if f, err := os.Create(sparse); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(5 << 30)
		f.Close()
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name, path string
		ctx        context.Context
		want       string // "" : read whole
		is         error
	}{
		{"a small file", small, context.Background(), "", nil},
		{"5 GiB sparse, refused by its size", sparse, context.Background(),
			"sparse.yaml is 5GiB, above the limit of 1MiB for input of kind wiring (raise it with --max-input wiring=SIZE)", ErrLimit},
		{"a FIFO with no writer, refused unopened", fifo, context.Background(), "not a regular file (a FIFO); input of kind wiring is read whole", ErrNotRegular},
		{"/dev/zero", "/dev/zero", context.Background(), "not a regular file (a character device)", ErrNotRegular},
		{"a directory", dir, context.Background(), "not a regular file (a directory)", ErrNotRegular},
		{"a cancelled context", small, cancelled, "context canceled", context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			b, err := ReadFile(c.ctx, c.path, Wiring)
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %v", took)
			}
			if c.want == "" {
				if err != nil || string(b) != "ports: 8\n" {
					t.Fatalf("%q, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
				t.Fatalf("err %v, want one containing %q and wrapping %v", err, c.want, c.is)
			}
		})
	}
}

// A file that grows past its limit while read is cut at the limit with a LimitError, whatever
// stat said at the open.
func TestReadStopsAtLimit(t *testing.T) {
	t.Cleanup(Reset)
	if err := Set("shard=10B"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "grows")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), path, Shard)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, []byte("0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	var le *LimitError
	if n != 10 || !errors.As(err, &le) || !strings.Contains(err.Error(), "grew while read") {
		t.Errorf("read %d bytes, %v; want 10 and a LimitError", n, err)
	}
}

func TestSet(t *testing.T) {
	t.Cleanup(Reset)
	for _, c := range []struct{ spec, want string }{
		{"demand=4GiB", ""},
		{"demand", "want KIND=SIZE"},
		{"nope=1MiB", "want KIND=SIZE with KIND one of calibration, demand, expert-counts, image, measured, partial, placement, report-json, routing, schedule, shard, timeline, wiring"},
		{"wiring=0", "must be positive"},
		{"wiring=1.5", "not a whole"},
	} {
		err := Set(c.spec)
		if c.want == "" {
			if err != nil || Limit(Demand) != 4<<30 {
				t.Errorf("Set(%q): %v, limit %d", c.spec, err, Limit(Demand))
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%q) = %v, want %q", c.spec, err, c.want)
		}
	}
	Reset()
	if Limit(Demand) != Default(Demand) {
		t.Errorf("Reset left %d", Limit(Demand))
	}
}
