package trace

import (
	"bytes"
	_ "embed"
)

//go:generate go run ./internal/mkdefault -o default_trace.json

// defaultTrace is made by synth.DefaultTrace from real Mixtral-8x7B routing counts
// (allenai/OLMoE, Apache-2.0); see the synth package and the metadata inside the file.
//
//go:embed default_trace.json
var defaultTrace []byte

// DefaultName is how the built-in trace is named in reports and errors.
const DefaultName = "built-in Mixtral-8x7B trace"

// Default returns the built-in default trace: Mixtral-8x7B on 8 GPUs, five text datasets × layers
// 0, 7, 15 × dispatch and combine (30 matrices), derived from measured per-expert routing counts,
// so that every command has realistic demand on a machine with no trace files.
func Default() (*Trace, error) {
	return Read(bytes.NewReader(defaultTrace), DefaultName, 0)
}
