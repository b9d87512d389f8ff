package emulator

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
)

// TransferSpec says which transfer model to build, the way a command line gives it: a bandwidth,
// or a calibration file (with an optional port-to-GPU map), or a table of measured times.
type TransferSpec struct {
	// Bandwidth is b in bytes per second for the bandwidth model (used when neither file is set).
	Bandwidth float64
	// Calibration is a calibration file: per-GPU-pair α + β·bytes.
	Calibration string
	// GPUMap is the GPU of each port, comma-separated NVML indices, PCI bus ids or UUIDs of the
	// calibration's GPUs ("" : port i is GPU i); calibration only.
	GPUMap string
	// Measured is a measured-times file (JSON, or CSV with header src,dst,bytes,seconds).
	Measured string
	// Context stops reading the calibration once done (nil: never).
	Context context.Context
}

// SpecError names the field of a TransferSpec or ReconfigSpec that is wrong, and its value; a
// command line reports it as the flag of the same name.
type SpecError struct {
	Field, Value string
	Err          error
}

func (e *SpecError) Error() string { return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err) }
func (e *SpecError) Unwrap() error { return e.Err }

// Model builds the transfer model. Errors are *SpecError naming the field ("calibration",
// "gpu-map", "measured").
func (t TransferSpec) Model() (TransferModel, error) {
	switch {
	case t.Calibration != "" && t.Measured != "":
		return nil, &SpecError{"calibration", t.Calibration, fmt.Errorf("measured times %q given too: pick one transfer model", t.Measured)}
	case t.Calibration != "":
		ctx := t.Context
		if ctx == nil {
			ctx = context.Background()
		}
		cal, err := model.LoadContext(ctx, t.Calibration)
		if err != nil {
			return nil, &SpecError{"calibration", t.Calibration, err}
		}
		// Entries are GPU indices, PCI bus ids or UUIDs; one the calibration was not taken on is
		// an error naming it and the calibration's GPUs.
		gpuOf, err := cal.GPUMap(t.GPUMap)
		if err != nil {
			return nil, &SpecError{"gpu-map", t.GPUMap, err}
		}
		m, err := AlphaBetaModel(cal, gpuOf)
		if err != nil {
			if t.GPUMap != "" {
				// The file was validated by Load: what is left to go wrong is the mapping.
				return nil, &SpecError{"gpu-map", t.GPUMap, err}
			}
			return nil, &SpecError{"calibration", t.Calibration, err}
		}
		return m, nil
	case t.Measured != "":
		tab, err := LoadMeasuredTable(t.Measured)
		if err != nil {
			return nil, &SpecError{"measured", t.Measured, err}
		}
		return MeasuredModel(tab), nil
	case t.GPUMap != "":
		return nil, &SpecError{"gpu-map", t.GPUMap, fmt.Errorf("only applies with a calibration")}
	}
	return BandwidthModel(t.Bandwidth), nil
}

// ParseGPUMap reads a port-to-GPU map: GPU indices, comma-separated, port 0 first; "" is nil
// (the identity).
func ParseGPUMap(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var gpuOf []int
	for _, p := range strings.Split(s, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%q is not a GPU index", p)
		}
		gpuOf = append(gpuOf, g)
	}
	return gpuOf, nil
}

// ReconfigSpec says which reconfiguration model to build: "parallel" (α_r per change, all
// concurrent) or "controller" (T_r per request of at most Batch changes, requests serialised,
// then T_w settling, overlapping unless SerialSettle).
type ReconfigSpec struct {
	Model         string
	Alpha, Tr, Tw float64 // seconds
	// Batch is the controller's B, the most changes one request carries; 0 is no limit (every
	// command one request).
	Batch int
	// SerialSettle makes the controller take the next command only once the last has settled.
	SerialSettle bool
}

// ReconfigModel builds the model; an unknown name is a *SpecError for field "reconfig-model".
func (r ReconfigSpec) ReconfigModel() (ReconfigModel, error) {
	switch r.Model {
	case "parallel":
		return ParallelReconfig(r.Alpha), nil
	case "controller":
		m := ControllerTiming{TR: r.Tr, TW: r.Tw, Batch: r.Batch, SerialSettle: r.SerialSettle}
		if r.Batch < 0 {
			return nil, &SpecError{"batch", strconv.Itoa(r.Batch), fmt.Errorf("want B ≥ 1, or 0 for no limit")}
		}
		return Controller(m), nil
	}
	return nil, &SpecError{"reconfig-model", r.Model, fmt.Errorf("want parallel or controller")}
}
