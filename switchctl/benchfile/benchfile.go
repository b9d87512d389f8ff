// Package benchfile is the switch bench file: the reconfiguration timings measured on a real
// switch controller (or its emulator) by `tetris-hil switch bench`, in a form the model side (the
// emulator, the broadcast model) reads without importing any serial or GPIO code.
//
// T_r is the time one request to the control station takes, a request carries at most B changes,
// and requests are serialised. T_w is the settle time after a command, during which the data path
// is unusable (Er-El and Feitelson §2.3.3: T_c = T_r + T_w, so a command of k changes costs
// ⌈k/B⌉·T_r + T_w; package ctlmodel is that model).
//
// Version 2 added B (field batch). A version 1 file has none and reads as B = 0, no limit: one
// request per command, which is what its T_r was used as.
package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
)

// Version is the format version this package writes; it reads it and version 1.
const Version = 2

// Stats summarises one measured latency over its samples.
type Stats struct {
	Samples       int     `json:"samples"`
	MedianSeconds float64 `json:"median_seconds"`
	P99Seconds    float64 `json:"p99_seconds"`
	MinSeconds    float64 `json:"min_seconds"`
	MaxSeconds    float64 `json:"max_seconds"`
}

// BatchSample is the measured busy time of batches of Changes changes, and the number of
// requests of T_r it amounts to (read from the shortest: a loaded host stretches a busy time,
// never shortens it).
type BatchSample struct {
	Changes       int     `json:"changes"`
	Samples       int     `json:"samples"`
	MedianSeconds float64 `json:"median_seconds"`
	MinSeconds    float64 `json:"min_seconds"`
	Requests      int     `json:"requests"`
}

// File is a switch bench file.
type File struct {
	Version int `json:"version"`
	// Backend is the controller backend measured ("serial", "gpio", "crystal", "fake", ...).
	Backend string `json:"backend"`
	// Wiring is the wiring map the bench ran with, and its SHA-256.
	Wiring       string `json:"wiring,omitempty"`
	WiringSHA256 string `json:"wiring_sha256,omitempty"`
	// Switches is the number of switches in the wiring map.
	Switches int `json:"switches,omitempty"`
	// TRSeconds and TWSeconds are the derived per-request time and settle time.
	TRSeconds float64 `json:"t_r_seconds"`
	TWSeconds float64 `json:"t_w_seconds"`
	// Batch is B, the most changes one request carries, as measured; 0 is no limit seen (up to
	// the largest batch tried, in BatchBusy). Version 2 on.
	Batch int `json:"batch"`
	// BatchBusy is what B was read from: per batch size tried, how long the controller was busy
	// with the requests (first change commanded to last acknowledged). Version 2 on.
	BatchBusy []BatchSample `json:"batch_busy,omitempty"`
	// RoundTrip is the command round trip (sent to acknowledged); Settle is commanded to settled.
	RoundTrip Stats `json:"round_trip"`
	Settle    Stats `json:"settle"`
	// Taken is when the bench ran (RFC 3339) and Tool the build that ran it.
	Taken string `json:"taken,omitempty"`
	Tool  string `json:"tool,omitempty"`
}

// Validate checks the fields the model uses.
func (f *File) Validate() error {
	if f.Version != Version && f.Version != 1 {
		return fmt.Errorf("version: %d, want %d (or 1)", f.Version, Version)
	}
	if f.Version == 1 && (f.Batch != 0 || f.BatchBusy != nil) {
		return fmt.Errorf("batch: %d in a version 1 file, which has no batch size (B came in version 2)", f.Batch)
	}
	if f.Batch < 0 {
		return fmt.Errorf("batch: %d, want B ≥ 1 changes per request, or 0 for no limit", f.Batch)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"t_r_seconds", f.TRSeconds}, {"t_w_seconds", f.TWSeconds}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("%s: %v, want a finite time ≥ 0", v.name, v.x)
		}
		// A day per command is no switch; larger values only overflow sums later.
		if v.x > 86400 {
			return fmt.Errorf("%s: %v s, above the limit of 86400 s", v.name, v.x)
		}
	}
	return nil
}

// Model is the controller model the file measured: T_r, T_w and B, with overlapping settles
// (the bench does not measure whether the controller overlaps them).
func (f *File) Model() ctlmodel.Model {
	return ctlmodel.Model{TR: f.TRSeconds, TW: f.TWSeconds, Batch: f.Batch}
}

// Decode reads a bench file from r, strictly: unknown fields, trailing data and a wrong version
// are errors.
func Decode(r io.Reader) (*File, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Read reads and validates the bench file at path; errors name the file.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("switch bench file: %w", err)
	}
	f, err := Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("switch bench file %s: %w", path, err)
	}
	return f, nil
}

// Marshal encodes f as indented JSON with a trailing newline, after validating it.
func (f *File) Marshal() ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
