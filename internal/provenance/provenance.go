// Package provenance ties a result file to what produced it: the build of the tool (module
// version, VCS revision, Go version) and the SHA-256 of every input file. Run records, sweep
// manifests and emulate reports carry both, so that a number can be traced to the code and the
// exact inputs behind it, and a changed input noticed.
package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Tool names this build: "tetris-hil", the module version, the VCS revision (12 hex digits,
// marked "+modified" when the tree had uncommitted changes) when the binary was built from a
// checkout, and the Go version.
func Tool() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "tetris-hil (unknown build)"
	}
	return describe(bi)
}

func describe(bi *debug.BuildInfo) string {
	v := "tetris-hil " + bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev == "" {
		rev = Commit // set at link time for a build without a VCS stamp
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + modified
	}
	return v + " " + bi.GoVersion
}

// Input is one input of a run: its role ("demand", "schedule", "calibration", ...), its path,
// and the SHA-256 of its contents (empty for an input built into the tool, which the tool
// version identifies).
type Input struct {
	Role   string `json:"role"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
}

// File hashes the file at path as an input in role.
func File(role, path string) (Input, error) {
	sum, err := SHA256(path)
	if err != nil {
		return Input{}, fmt.Errorf("hashing %s %s: %w", role, path, err)
	}
	return Input{Role: role, Path: path, SHA256: sum}, nil
}

// Builtin names an input compiled into the tool.
func Builtin(role, name string) Input { return Input{Role: role, Path: name} }

// Files hashes each (role, path) pair in order, skipping empty paths.
func Files(pairs ...[2]string) ([]Input, error) {
	var out []Input
	for _, p := range pairs {
		if p[1] == "" {
			continue
		}
		in, err := File(p[0], p[1])
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// SHA256 is the hex SHA-256 of the file at path.
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
