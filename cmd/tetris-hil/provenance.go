package main

import (
	"github.com/tetris-hil/tetris-hil/internal/provenance"
)

// describeInputs hashes the named files (role, path; empty paths skipped). A missing demand path
// means the built-in trace, which the tool version identifies.
func describeInputs(files ...[2]string) ([]provenance.Input, error) {
	var out []provenance.Input
	for _, rf := range files {
		if rf[1] == "" {
			if rf[0] == "demand" {
				out = append(out, provenance.Builtin("demand", "built-in trace"))
			}
			continue
		}
		in, err := provenance.File(rf[0], rf[1])
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}
