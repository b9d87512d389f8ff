// Package benchfile is the switch bench file: the reconfiguration timings measured on a real
// switch controller (or its emulator) by `tetris-hil switch bench`, in a form the model side (the
// emulator, the broadcast model) reads without importing any serial or GPIO code.
//
// T_r is the time one command to the control station takes; commands are serialised. T_w is the
// settle time after a command, during which the data path is unusable; settle times of
// consecutive commands overlap (Er-El and Feitelson §2.3.3: T_c = T_r + T_w, so k simultaneous
// changes cost about k·T_r + T_w).
package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Version is the format version this package writes and reads.
const Version = 1

// Stats summarises one measured latency over its samples.
type Stats struct {
	Samples       int     `json:"samples"`
	MedianSeconds float64 `json:"median_seconds"`
	P99Seconds    float64 `json:"p99_seconds"`
	MinSeconds    float64 `json:"min_seconds"`
	MaxSeconds    float64 `json:"max_seconds"`
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
	// TRSeconds and TWSeconds are the derived per-command time and settle time.
	TRSeconds float64 `json:"t_r_seconds"`
	TWSeconds float64 `json:"t_w_seconds"`
	// RoundTrip is the command round trip (sent to acknowledged); Settle is commanded to settled.
	RoundTrip Stats `json:"round_trip"`
	Settle    Stats `json:"settle"`
	// Taken is when the bench ran (RFC 3339) and Tool the build that ran it.
	Taken string `json:"taken,omitempty"`
	Tool  string `json:"tool,omitempty"`
}

// Validate checks the fields the model uses.
func (f *File) Validate() error {
	if f.Version != Version {
		return fmt.Errorf("version: %d, want %d", f.Version, Version)
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
