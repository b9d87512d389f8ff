package main

import (
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
)

// version and --version print the same: module, version and a commit line that never is a bare
// "(devel)": the commit, or why this build has none.
func TestVersion(t *testing.T) {
	a, code, err := cli(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d (%v)", code, err)
	}
	b, code, _ := cli(t, "--version")
	if code != 0 || a != b {
		t.Errorf("--version (exit %d) prints %q, version %q", code, b, a)
	}
	for _, want := range []string{"module   github.com/tetris-hil/tetris-hil\n", "\ncommit   ", "\ngo       go1."} {
		if !strings.Contains(a, want) {
			t.Errorf("version output lacks %q:\n%s", want, a)
		}
	}
	// A test binary has no VCS stamp: the commit line says so, and how to get one.
	if provenance.Commit == "" && !strings.Contains(a, "commit   unknown: this build has no VCS stamp") {
		t.Errorf("a build without a VCS stamp does not say so:\n%s", a)
	}
}
