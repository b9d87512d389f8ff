package provenance

import (
	"runtime"
	"runtime/debug"
)

// Commit is the VCS revision to report when the build carries no VCS stamp (go run, go test,
// GOFLAGS=-buildvcs=false, a tarball without .git): set it at link time with
// -ldflags "-X github.com/tetris-hil/tetris-hil/internal/provenance.Commit=$(git rev-parse HEAD)".
var Commit string

// Build is what `tetris-hil version` reports of this binary.
type Build struct {
	Module, Version string
	// Commit is the revision, from the VCS stamp or the Commit variable; "" when neither says.
	Commit string
	// Source says where Commit came from: "vcs stamp", "-ldflags", or why there is none.
	Source   string
	Modified bool
	Go       string
	Platform string
}

// NoStamp explains a build without a commit.
const NoStamp = "unknown: this build has no VCS stamp (go run, go test, -buildvcs=false, or no .git); " +
	"go build in a git checkout stamps it, or set -ldflags \"-X github.com/tetris-hil/tetris-hil/internal/provenance.Commit=$(git rev-parse HEAD)\""

// ReadBuild describes this binary.
func ReadBuild() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{GoVersion: runtime.Version(), Main: debug.Module{Path: "github.com/tetris-hil/tetris-hil", Version: "(unknown)"}}
	}
	return buildOf(bi, Commit)
}

func buildOf(bi *debug.BuildInfo, linked string) Build {
	b := Build{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit, b.Source = s.Value, "vcs stamp"
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Commit == "" && linked != "" {
		b.Commit, b.Source = linked, "-ldflags"
	}
	if b.Commit == "" {
		b.Source = NoStamp
	}
	if b.Version == "" || b.Version == "(devel)" {
		b.Version = "(devel): built from a source tree, not a tagged module version"
	}
	return b
}
