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
