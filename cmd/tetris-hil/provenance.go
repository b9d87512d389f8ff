package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// toolVersion names this build: the module version, and the VCS revision (marked "+modified"
// when the tree had uncommitted changes) when the binary was built from a checkout. Run records
// carry it so that a number can be traced to the code that produced it.
func toolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "tetris-hil (unknown build)"
	}
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
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + modified
	}
	return v + " " + bi.GoVersion
}

// inputFile records one file a run read, with its SHA-256, so that a result can be tied to the
// exact inputs (and a changed input noticed).
type inputFile struct {
	Role   string `json:"role"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
}

// describeInputs hashes the named files; role → path, empty paths skipped. A missing demand
// path means the built-in trace, which the tool version identifies.
func describeInputs(files ...[2]string) ([]inputFile, error) {
	var out []inputFile
	for _, rf := range files {
		role, path := rf[0], rf[1]
		if path == "" {
			if role == "demand" {
				out = append(out, inputFile{Role: role, Path: "built-in trace"})
			}
			continue
		}
		sum, err := fileSHA256(path)
		if err != nil {
			return nil, fmt.Errorf("hashing %s %s: %w", role, path, err)
		}
		out = append(out, inputFile{Role: role, Path: path, SHA256: sum})
	}
	return out, nil
}

func fileSHA256(path string) (string, error) {
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
