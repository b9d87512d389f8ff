// Package safefile writes result files so that a reader never sees half of one and so that what
// sits at the output path survives in the form the user gave it:
//
//   - a regular file (or an absent one) is replaced through a temporary file in the same directory,
//     renamed into place only once it is complete; an existing file keeps its permission bits, a new
//     one gets 0666 less the umask, as any other program's output would;
//   - a symbolic link is followed and its final target is replaced the same way, so the link keeps
//     pointing where it did;
//   - a character device, FIFO or socket (/dev/null, /dev/stdout, a named pipe) is written into
//     directly, never replaced: running as root must not turn /dev/full into a regular file;
//   - a directory is refused.
//
// WriteStream is WriteFile for output produced piece by piece (a schedule of 250 MB), with the
// same rules.
//
// Check reports the errors that writing would meet (a missing or non-directory parent, a
// directory at the path) before any work starts, so a long run does not fail at its end.
package safefile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Check reports whether path can be written as an output: its target (after following symbolic
// links) must not be a directory, and the directory that will hold it must exist.
func Check(path string) error {
	if path == "" {
		return errors.New("empty output path")
	}
	target, info, err := resolve(path)
	if err != nil {
		return err
	}
	if info != nil {
		if info.IsDir() {
			return fmt.Errorf("output %s is a directory", path)
		}
		if !info.Mode().IsRegular() {
			return nil // a device or FIFO is opened and written into as it is
		}
	}
	dir := filepath.Dir(target)
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("output %s: directory %s does not exist", path, dir)
		}
		return fmt.Errorf("output %s: %w", path, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("output %s: %s is not a directory", path, dir)
	}
	return nil
}

// resolve follows symbolic links at path to the final target. info is nil when the target does
// not exist (a dangling link resolves to the path it names, which will be created).
func resolve(path string) (string, fs.FileInfo, error) {
	target := path
	for hops := 0; ; hops++ {
		if hops > 40 {
			return "", nil, fmt.Errorf("output %s: too many levels of symbolic links", path)
		}
		info, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("output %s: %w", path, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return target, info, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", nil, fmt.Errorf("output %s: %w", path, err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
}

// WriteFile writes data to path by the rules in the package doc.
func WriteFile(path string, data []byte) error {
	return WriteStream(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteStream writes to path, by the rules in the package doc, what write writes to w: a
// buffered writer over the temporary file (or the device), flushed once write returns, so that
// a large output (a schedule file of 250 MB) is produced piece by piece and never held whole in
// memory. If write fails, the error is returned naming path; a regular or absent target is then
// left as it was and the temporary file removed, while a device or FIFO keeps what reached it.
func WriteStream(path string, write func(io.Writer) error) error {
	target, info, err := resolve(path)
	if err != nil {
		return err
	}
	if info != nil {
		if info.IsDir() {
			return fmt.Errorf("output %s is a directory", path)
		}
		if !info.Mode().IsRegular() {
			return writeInto(path, target, write)
		}
	}
	return replace(path, target, info, write)
}

// bufferSize is the buffer between a stream's writes and the file: large enough that a
// schedule's many small pieces cost few system calls. A single write at least this large goes to
// the file directly (bufio), so WriteFile's data is not copied.
const bufferSize = 64 << 10

// fill runs write through a buffer over f and flushes it.
func fill(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, bufferSize)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// writeInto writes into an existing non-regular file (device, FIFO) without replacing it.
func writeInto(path, target string, write func(io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := fill(f, write); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// replace writes a temporary file beside target and renames it into place.
func replace(path, target string, existing fs.FileInfo, write func(io.Writer) error) error {
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("writing %s: directory %s does not exist", path, dir)
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// CreateTemp makes the file 0600. An existing output keeps its mode; a new one gets what the
	// umask gives an ordinary create.
	mode := existing
	var perm fs.FileMode
	if mode != nil {
		perm = mode.Mode().Perm()
	} else {
		perm = 0o666 &^ currentUmask()
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := fill(tmp, write); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(name, target); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteJSON writes v as indented JSON (one space per level, trailing newline) by WriteFile's rules.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return WriteFile(path, append(b, '\n'))
}
