package goldenfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing the real test.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = true; r.errors = append(r.errors, f) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("same\n"))
	if len(r.errors) != 0 {
		t.Errorf("equal output reported: %v", r.errors)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("different\n"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "differs from") {
		t.Errorf("different output: %v, want one 'differs from' error", r.errors)
	}
	r = &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "missing.golden"), []byte("x"))
	if !r.fatal {
		t.Error("a missing golden file did not stop the test")
	}
}
