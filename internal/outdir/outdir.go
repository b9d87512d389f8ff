// Package outdir keeps a command's output directory free of stale results. A command that
// writes a set of files into a directory (sweep --out, emulate --timeline) knows the names it
// owns there, from the manifest its previous run left or from its fixed naming scheme; before it
// writes, Clean removes the owned files this run will not rewrite, so that no plot of an
// algorithm dropped from the rerun sits beside the new results.
//
// The rule for interrupted writes is the callers': write the manifest first marked incomplete
// (listing every file the run will write), then the files, then the manifest again marked
// complete. A reader that finds a manifest marked incomplete, or files without a manifest, knows
// the directory holds a partial run.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Clean removes from dir each name in owned that is not in next, is a regular file, and is not
// one of protect (paths of the run's own inputs: a rerun never deletes what it reads). Names that
// are not plain file names (a separator, "." or "..", as a hand-edited manifest might hold) are
// ignored, so nothing outside dir is ever touched. It returns the paths removed.
func Clean(dir string, owned, next, protect []string) ([]string, error) {
	keep := make(map[string]bool, len(next))
	for _, n := range next {
		keep[n] = true
	}
	var protected []fs.FileInfo
	for _, p := range protect {
		if st, err := os.Stat(p); err == nil {
			protected = append(protected, st)
		}
	}
	var removed []string
	seen := make(map[string]bool, len(owned))
	for _, n := range owned {
		if !PlainName(n) || keep[n] || seen[n] {
			continue
		}
		seen[n] = true
		path := filepath.Join(dir, n)
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("removing stale output %s: %w", path, err)
		}
		if !st.Mode().IsRegular() || isAny(st, protected) {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("removing stale output %s: %w", path, err)
		}
		removed = append(removed, path)
	}
	return removed, nil
}

func isAny(st fs.FileInfo, of []fs.FileInfo) bool {
	for _, o := range of {
		if os.SameFile(st, o) {
			return true
		}
	}
	return false
}

// PlainName reports whether n names a file directly inside a directory: not empty, no path
// separator, not "." or "..".
func PlainName(n string) bool {
	return n != "" && n != "." && n != ".." && filepath.Base(n) == n && !containsSep(n)
}

func containsSep(n string) bool {
	for i := 0; i < len(n); i++ {
		if os.IsPathSeparator(n[i]) || n[i] == '/' {
			return true
		}
	}
	return false
}

// Names lists the names of the entries in dir that match keep; a missing dir has none.
func Names(dir string, keep func(name string) bool) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if keep(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Check reports whether dir is, or can be made, an output directory: it exists as a directory,
// or the nearest part of its path that exists is one (Make creates the rest). A path through a
// file ("results.csv/run1") is refused, naming the file. A trailing separator ("runs/") is the
// same directory.
func Check(dir string) error {
	_, err := missing(dir)
	return err
}

// missing lists the directories of dir's path that do not exist yet, outermost first.
func missing(dir string) ([]string, error) {
	if dir == "" {
		return nil, errors.New("empty directory path")
	}
	var todo []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if len(todo) == 0 {
					return nil, fmt.Errorf("%s is not a directory", p)
				}
				return nil, fmt.Errorf("cannot create directory %s: %s is a file, not a directory", filepath.Clean(dir), p)
			}
			break
		}
		// ENOTDIR: a part above is a file; the walk up finds it and names it.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("output directory %s: %w", dir, err)
		}
		todo = append([]string{p}, todo...)
		if parent := filepath.Dir(p); parent == p {
			break
		}
	}
	return todo, nil
}

// Make creates dir and its missing parents (0755 less the umask), and returns the directories
// it created, outermost first, for the caller to tell the user.
func Make(dir string) ([]string, error) {
	todo, err := missing(dir)
	if err != nil {
		return nil, err
	}
	var made []string
	for _, p := range todo {
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, fmt.Errorf("creating output directory %s: %w", p, err)
		}
		made = append(made, p)
	}
	return made, nil
}
