// Package goldenfile is the one place tests compare output with golden files under testdata/ and
// the one -update flag that rewrites them (go test ./pkg -update), so every package's golden
// files are refreshed, and reported, the same way.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// Update reports whether the test run was asked to rewrite golden files.
func Update() bool { return *update }

// Check compares got with the golden file at path (relative to the package directory), writing
// the file first under -update. A difference is a test error that names the file and says how
// to refresh it after checking the change.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (%d bytes, want %d); check the change, then rerun with -update:\n%s",
			path, len(got), len(want), truncate(got, 4000))
	}
}

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "\n..."...)
}
