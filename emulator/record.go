package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// RunRecordVersion is the version of the run-record file this build writes. Version 1 (written
// by emulate --timeline before records carried their source, tool, inputs and models) is read
// too.
const RunRecordVersion = 2

// Sources of a run record.
const (
	SourceEmulator = "emulator" // executed in virtual time by Run
	SourceLive     = "live"     // executed on real GPUs (and switches) by the live runner
)

// MatrixRef says which matrix of a demand file a run served: its index in the file (−1 for a
// schedule executed without its demand), its MoE layer (−1 without trace metadata), phase,
// dataset and a label for people.
type MatrixRef struct {
	Index   int    `json:"index"`
	Layer   int    `json:"layer"`
	Phase   string `json:"phase,omitempty"`
	Dataset string `json:"dataset,omitempty"`
	Label   string `json:"label,omitempty"`
}

// RunRecord is the file form of one execution of one schedule, emulated or live: what ran
// (algorithm, matrix, inputs with their SHA-256, tool version), under which timing models, and
// what happened (Result and per-circuit Timeline). emulate --timeline writes one per run;
// verify --timeline and the live runner's replay read and write the same type.
type RunRecord struct {
	Version int `json:"version"`
	// Source is SourceEmulator or SourceLive.
	Source string `json:"source,omitempty"`
	// Tool is the build that produced the record (provenance.Tool).
	Tool string `json:"tool,omitempty"`
	// Inputs are the files the run read, with their digests.
	Inputs    []provenance.Input `json:"inputs,omitempty"`
	Algorithm string             `json:"algorithm"`
	Matrix    MatrixRef          `json:"matrix"`
	// TransferModel and ReconfigModel name the timing models (live: what was measured and how
	// reconfiguration was injected or driven).
	TransferModel string              `json:"transfer_model,omitempty"`
	ReconfigModel string              `json:"reconfig_model,omitempty"`
	Result        *Result             `json:"result"`
	Timeline      *schedules.Timeline `json:"timeline"`
}

// Write writes the record to path (safefile rules: a reader never sees half a file).
func (r *RunRecord) Write(path string) error {
	if err := safefile.WriteJSON(path, r); err != nil {
		return fmt.Errorf("run record: %w", err)
	}
	return nil
}

// ReadRunRecord reads a run record; name prefixes every error. Unknown fields are an error, so
// that a misspelt field is noticed rather than read as zero.
func ReadRunRecord(r io.Reader, name string) (*RunRecord, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rec RunRecord
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if rec.Version < 1 || rec.Version > RunRecordVersion {
		return nil, fmt.Errorf("%s: field version: %d is not supported (this build reads versions 1..%d)", name, rec.Version, RunRecordVersion)
	}
	switch rec.Source {
	case "", SourceEmulator, SourceLive:
	default:
		return nil, fmt.Errorf("%s: field source: %q is neither %q nor %q", name, rec.Source, SourceEmulator, SourceLive)
	}
	if rec.Timeline == nil {
		return nil, fmt.Errorf("%s: field timeline: missing", name)
	}
	return &rec, nil
}

// LoadRunRecord reads the run record at path.
func LoadRunRecord(path string) (*RunRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadRunRecord(f, path)
}

// LoadTimeline reads the timeline of a run record (a JSON object with a "timeline" field) or a
// bare schedules.Timeline, from any producer.
func LoadTimeline(path string) (*schedules.Timeline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := probe["timeline"]; ok {
		rec, err := ReadRunRecord(bytes.NewReader(b), path)
		if err != nil {
			return nil, err
		}
		return rec.Timeline, nil
	}
	var tl schedules.Timeline
	if err := json.Unmarshal(b, &tl); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &tl, nil
}
