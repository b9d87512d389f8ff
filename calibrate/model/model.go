// Package model holds the calibration file: the per-GPU-pair α-β (Hockney) transfer model
// T(m) = α + β·m fitted on a real server, the raw medians it was fitted to, and the inventory it
// was measured on. It has no GPU code, so the emulator reads calibrations without cgo or NVML.
package model

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// FormatVersion is the calibration file version this package reads and writes.
const FormatVersion = 1

// Calibration is the content of a calibration file.
type Calibration struct {
	Version int `json:"version"`
	// Created is when the measurement finished, RFC 3339, for provenance only.
	Created   string    `json:"created,omitempty"`
	Inventory Inventory `json:"inventory"`
	// Pairs has one fit per measured ordered GPU pair (src ≠ dst).
	Pairs []PairFit `json:"pairs"`
}

// Inventory summarises the machine a calibration was taken on: a calibration only predicts the
// machine it describes, so a reader can compare this against the machine in hand.
type Inventory struct {
	Host   string `json:"host,omitempty"`
	Driver string `json:"driver,omitempty"`
	CUDA   string `json:"cuda,omitempty"`
	GPUs   []GPU  `json:"gpus"`
	// Links names the interconnect between ordered pairs as NVML reports it (e.g. "NVLINK",
	// "PCIE_HOSTBRIDGE"), keyed "src-dst".
	Links map[string]string `json:"links,omitempty"`
	// Fake is true when the numbers come from fake devices, not a real server.
	Fake bool `json:"fake,omitempty"`
}

// GPU is one device of the inventory.
type GPU struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	PCIBusID string `json:"pci_bus_id,omitempty"`
	UUID     string `json:"uuid,omitempty"`
	// SMClockMHz and MemClockMHz are the clocks during measurement (locked if the run locked them).
	SMClockMHz  int `json:"sm_clock_mhz,omitempty"`
	MemClockMHz int `json:"mem_clock_mhz,omitempty"`
}

// PairFit is the α-β fit for transfers from GPU Src to GPU Dst.
type PairFit struct {
	Src int `json:"src"`
	Dst int `json:"dst"`
	// Alpha is the fixed cost of one transfer, seconds.
	Alpha float64 `json:"alpha_seconds"`
	// Beta is the cost per byte, seconds per byte (1/β is the asymptotic bandwidth).
	Beta float64 `json:"beta_seconds_per_byte"`
	// R2 is the coefficient of determination of the fit on Medians (1 is a perfect line).
	R2 float64 `json:"r2"`
	// Medians are the measured points the fit was made on.
	Medians []Median `json:"medians,omitempty"`
}

// Median is the median of the repetitions of one message size.
type Median struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// Repetitions is how many timed transfers the median is taken over.
	Repetitions int `json:"repetitions,omitempty"`
}

// Seconds is the fitted time to move bytes: α + β·bytes.
func (p PairFit) Seconds(bytes int64) float64 { return p.Alpha + p.Beta*float64(bytes) }

// GPUs is the number of GPUs the calibration covers: the inventory's, or one more than the
// largest index any pair names when the inventory is empty.
func (c *Calibration) GPUs() int {
	n := len(c.Inventory.GPUs)
	for _, p := range c.Pairs {
		n = max(n, p.Src+1, p.Dst+1)
	}
	return n
}

// Pair returns the fit for the ordered pair (src, dst).
func (c *Calibration) Pair(src, dst int) (PairFit, bool) {
	for _, p := range c.Pairs {
		if p.Src == src && p.Dst == dst {
			return p, true
		}
	}
	return PairFit{}, false
}

// Validate checks every field a model reader relies on and names the first bad one.
func (c *Calibration) Validate() error {
	if c.Version != FormatVersion {
		return fmt.Errorf("field version: %d is not supported (this build reads version %d)", c.Version, FormatVersion)
	}
	for i, g := range c.Inventory.GPUs {
		if g.Index != i {
			return fmt.Errorf("field inventory.gpus[%d].index: %d, want %d (GPUs are listed in index order)", i, g.Index, i)
		}
	}
	seen := map[[2]int]bool{}
	n := len(c.Inventory.GPUs)
	for i, p := range c.Pairs {
		if p.Src < 0 || p.Dst < 0 || (n > 0 && (p.Src >= n || p.Dst >= n)) {
			return fmt.Errorf("field pairs[%d]: GPU pair (%d, %d) is outside the inventory of %d GPUs", i, p.Src, p.Dst, n)
		}
		if p.Src == p.Dst {
			return fmt.Errorf("field pairs[%d]: src and dst are both GPU %d (only transfers between GPUs are calibrated)", i, p.Src)
		}
		if seen[[2]int{p.Src, p.Dst}] {
			return fmt.Errorf("field pairs[%d]: GPU pair (%d, %d) appears twice", i, p.Src, p.Dst)
		}
		seen[[2]int{p.Src, p.Dst}] = true
		if !finite(p.Alpha) || p.Alpha < 0 {
			return fmt.Errorf("field pairs[%d].alpha_seconds: %g is not a non-negative time", i, p.Alpha)
		}
		if !finite(p.Beta) || p.Beta <= 0 {
			return fmt.Errorf("field pairs[%d].beta_seconds_per_byte: %g is not a positive cost per byte", i, p.Beta)
		}
		if math.IsNaN(p.R2) || p.R2 > 1 {
			return fmt.Errorf("field pairs[%d].r2: %g is not a coefficient of determination (≤ 1)", i, p.R2)
		}
		for j, m := range p.Medians {
			if m.Bytes < 0 || !finite(m.Seconds) || m.Seconds < 0 {
				return fmt.Errorf("field pairs[%d].medians[%d]: %d bytes in %g s is not a measurement", i, j, m.Bytes, m.Seconds)
			}
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Read decodes and validates a calibration; name (a file name) prefixes every error.
func Read(r io.Reader, name string) (*Calibration, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: trailing data after the calibration object", name)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// Load reads a calibration file from disk.
func Load(path string) (*Calibration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Write encodes c as indented JSON after validating it, so no invalid file is ever written.
func (c *Calibration) Write(w io.Writer) error {
	if err := c.Validate(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(c)
}
