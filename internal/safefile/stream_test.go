package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// chunks is a stream of many small writes, more than one buffer's worth, as a schedule writer
// produces them.
func chunks(w io.Writer) error {
	for i := range 20000 {
		if _, err := fmt.Fprintf(w, "line %d\n", i); err != nil {
			return err
		}
	}
	return nil
}

func chunksBytes() []byte {
	var b bytes.Buffer
	chunks(&b)
	return b.Bytes()
}

// TestWriteStream: a stream lands whole, by WriteFile's rules, at every kind of target.
func TestWriteStream(t *testing.T) {
	want := chunksBytes()
	if len(want) <= 2*bufferSize {
		t.Fatalf("the stream is %d bytes, want more than two buffers (%d) so that it is flushed on the way", len(want), 2*bufferSize)
	}
	cases := []struct {
		name string
		// setup returns the path to write and the file that must then hold the stream.
		setup    func(t *testing.T, dir string) (path, holder string)
		wantPerm os.FileMode
	}{
		{"absent", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "new.json")
			return p, p
		}, 0o666 &^ currentUmask()},
		{"existing keeps its mode", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "old.json")
			if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o640); err != nil {
				t.Fatal(err)
			}
			return p, p
		}, 0o640},
		{"symlink target replaced", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "target.json")
			if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(target, 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink("target.json", link); err != nil {
				t.Fatal(err)
			}
			return link, target
		}, 0o644},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, holder := c.setup(t, dir)
			if err := WriteStream(path, chunks); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(holder)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s holds %d bytes, want the %d streamed", holder, len(got), len(want))
			}
			st, err := os.Stat(holder)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != c.wantPerm {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), c.wantPerm)
			}
			if path != holder {
				if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSymlink == 0 {
					t.Errorf("%s is no longer a symbolic link (err %v)", path, err)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

// TestWriteStreamDevices: a FIFO and /dev/null are written into, not replaced.
func TestWriteStreamDevices(t *testing.T) {
	if err := WriteStream("/dev/null", chunks); err != nil {
		t.Fatalf("/dev/null: %v", err)
	}
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- []byte("open: " + err.Error())
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if err := WriteStream(p, chunks); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, chunksBytes()) {
		t.Errorf("the FIFO's reader got %d bytes, want %d", len(b), len(chunksBytes()))
	}
	if st, _ := os.Lstat(p); st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: mode %v", st.Mode())
	}
}

// TestWriteStreamFailureKeepsTarget: a stream that fails half-way (after more than a buffer has
// reached the temporary file) leaves the old file as it was, no temporary file, and an error
// that names the path and wraps the stream's own.
func TestWriteStreamFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteStream(p, func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 3*bufferSize)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v, want one naming %s and wrapping the stream's", err, p)
	}
	if got := readString(t, p); got != "old" {
		t.Errorf("the target holds %d bytes, want the old file kept", len(got))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the old output", len(entries))
	}
	// A directory is refused before the stream runs.
	called := false
	err = WriteStream(dir, func(io.Writer) error { called = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "is a directory") || called {
		t.Errorf("WriteStream(dir) = %v (stream called: %v), want a directory error before any write", err, called)
	}
}

func ExampleWriteStream() {
	dir, _ := os.MkdirTemp("", "safefile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "squares.txt")
	err := WriteStream(path, func(w io.Writer) error {
		for i := 1; i <= 3; i++ {
			if _, err := fmt.Fprintln(w, i*i); err != nil {
				return err
			}
		}
		return nil
	})
	fmt.Println(err)
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// <nil>
	// 1
	// 4
	// 9
}
