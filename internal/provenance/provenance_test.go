package provenance

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"no vcs", nil, "tetris-hil (devel) go1.26"},
		{"clean", []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}},
			"tetris-hil (devel) 0123456789ab go1.26"},
		{"modified", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}},
			"tetris-hil (devel) abc+modified go1.26"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}, Settings: tc.settings}
			if got := describe(bi); got != tc.want {
				t.Errorf("describe = %q, want %q", got, tc.want)
			}
		})
	}
	if !strings.HasPrefix(Tool(), "tetris-hil ") {
		t.Errorf("Tool() = %q", Tool())
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Files([2]string{"demand", p}, [2]string{"calibration", ""})
	if err != nil {
		t.Fatal(err)
	}
	// SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if len(in) != 1 || in[0].Role != "demand" || in[0].Path != p || in[0].SHA256 != want {
		t.Errorf("Files = %+v, want one demand input with SHA-256 %s", in, want)
	}
	if _, err := Files([2]string{"schedule", filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "schedule") {
		t.Errorf("missing file: error %v, want one naming the role", err)
	}
}

func TestBuildSaysWhereTheCommitCameFrom(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "m", Version: "v1.2.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "true"}}}
	bare := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "m", Version: "(devel)"}}
	for _, c := range []struct {
		name             string
		bi               *debug.BuildInfo
		linked           string
		commit, source   string
		modified, tagged bool
	}{
		{"stamp wins", stamped, "fff", "0123abc", "vcs stamp", true, true},
		{"linked", bare, "fff", "fff", "-ldflags", false, false},
		{"neither", bare, "", "", NoStamp, false, false},
	} {
		b := buildOf(c.bi, c.linked)
		if b.Commit != c.commit || b.Source != c.source || b.Modified != c.modified {
			t.Errorf("%s: %+v", c.name, b)
		}
		if tagged := b.Version == "v1.2.0"; tagged != c.tagged || (!tagged && !strings.Contains(b.Version, "not a tagged")) {
			t.Errorf("%s: version %q", c.name, b.Version)
		}
	}
	old := Commit
	Commit = "fedcba9876543210"
	defer func() { Commit = old }()
	if got := describe(bare); got != "tetris-hil (devel) fedcba987654 go1.26" {
		t.Errorf("describe with a linked commit = %q", got)
	}
}
