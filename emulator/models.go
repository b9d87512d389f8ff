package emulator

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// TransferModel gives the time one circuit needs to move its bytes once its path is established.
type TransferModel interface {
	// Name identifies the model in reports, e.g. "bandwidth 100 GB/s" or "alphabeta cal.json".
	Name() string
	// Seconds is the transfer time of bytes from port src to port dst.
	Seconds(src, dst int, bytes int64) (float64, error)
	// MinSeconds is a lower bound on the total time of moving bytes (> 0) from src to dst in
	// any number of circuits whose sizes add up to bytes (schedules.PairLower): what the run's
	// lower bounds charge the pair. Seconds(src, dst, bytes) itself is such a bound only where
	// splitting cannot help, as under bytes/b or α + β·bytes with α ≥ 0; SplitLowerBound gives it
	// for any piecewise-linear Seconds.
	MinSeconds(src, dst int, bytes int64) (float64, error)
}

// SplitLowerBound is D·min_{1≤m≤D} T(m)/m for D = bytes and T = seconds, evaluated at the sizes
// in at (those outside 1..D are skipped; 1 and D are always tried). It is a lower bound on the
// time of any split of D bytes into circuits when at holds every end of the size intervals on
// which T is linear (or the larger of a linear function and 0):
//
//   - Pieces d_1..d_k ≥ 1 with Σ d_i = D take Σ T(d_i) = Σ d_i·(T(d_i)/d_i) ≥ D·min_m T(m)/m.
//     A piece of 0 bytes takes T(0) ≥ 0 (Run refuses a negative transfer time), so it only
//     adds; for the same reason T is clamped at 0 here.
//   - On an interval where T(m) = a + b·m, T(m)/m = b + a/m is monotone in m, and so is
//     max(b + a/m, 0): its least value over the interval's whole sizes is at one of its ends.
//
// So the minimum over the candidates is the minimum over every m in 1..D. For T = α + β·m with
// α ≥ 0 it is reached at m = D: the bound is T(D) = α + β·D (k pieces cost k·α + β·D).
func SplitLowerBound(bytes int64, at []int64, seconds func(bytes int64) (float64, error)) (float64, error) {
	if bytes <= 0 {
		return 0, nil
	}
	best, err := seconds(bytes) // m = D: T(D)·D/D, exactly T(D)
	if err != nil {
		return 0, err
	}
	best = max(best, 0)
	for _, m := range append([]int64{1}, at...) {
		if m < 1 || m >= bytes {
			continue
		}
		t, err := seconds(m)
		if err != nil {
			return 0, err
		}
		best = min(best, max(t, 0)*(float64(bytes)/float64(m)))
	}
	return best, nil
}

type bandwidthModel struct{ b float64 }

// BandwidthModel is the seed's simulation model: bytes / b, b in bytes per second (> 0).
func BandwidthModel(bytesPerSecond float64) TransferModel { return bandwidthModel{bytesPerSecond} }

func (m bandwidthModel) Name() string { return "bandwidth " + units.FormatBandwidth(m.b) }

func (m bandwidthModel) Seconds(_, _ int, bytes int64) (float64, error) {
	if !(m.b > 0) {
		return 0, fmt.Errorf("bandwidth model: bandwidth %g B/s is not positive", m.b)
	}
	return float64(bytes) / m.b, nil
}

// MinSeconds is bytes/b: pieces at one rate take Σ d_i/b = bytes/b, however many.
func (m bandwidthModel) MinSeconds(src, dst int, bytes int64) (float64, error) {
	return m.Seconds(src, dst, bytes)
}

// BandwidthOf returns the b of a BandwidthModel, and false for any other model.
func BandwidthOf(m TransferModel) (float64, bool) {
	bm, ok := m.(bandwidthModel)
	return bm.b, ok
}

type alphaBetaModel struct {
	name  string
	gpus  int
	gpuOf []int
	fits  []model.PairFit // gpus×gpus, indexed src*gpus+dst
	have  []bool
}

// AlphaBetaModel uses a calibration's per-pair fit α + β·bytes. gpuOf maps a fabric port to the
// GPU it stands for; nil is the identity. Every pair of distinct GPUs a schedule uses must be
// calibrated; a transfer between two ports on one GPU costs nothing (it never leaves the device)
// unless the calibration has that GPU's loopback pair (two processes on one GPU, how a one-GPU
// machine is calibrated), which it then uses. Each size gets the piece of the fit covering it.
//
// Under this model every circuit pays α, so a demand split into several circuits (barrier rounds)
// pays α once per piece; Run notes this in Result.Notes.
func AlphaBetaModel(c *model.Calibration, gpuOf []int) (TransferModel, error) {
	if c == nil {
		return nil, fmt.Errorf("alphabeta model: no calibration")
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("alphabeta model: %w", err)
	}
	g := c.GPUs()
	for p, gpu := range gpuOf {
		if _, err := c.GPUIndex(strconv.Itoa(gpu)); err != nil {
			// Names the GPU asked for and the GPUs the calibration was taken on.
			return nil, fmt.Errorf("alphabeta model: port %d: %w", p, err)
		}
	}
	m := &alphaBetaModel{name: "alphabeta", gpus: g, gpuOf: slices.Clone(gpuOf),
		fits: make([]model.PairFit, g*g), have: make([]bool, g*g)}
	if c.Inventory.Host != "" {
		m.name += " " + c.Inventory.Host
	}
	idx := c.Index()
	for _, p := range c.Pairs {
		// Where a pair was measured under several traffic patterns, the calibration says which
		// one schedules see (model.Calibration.Pair); its fit covers each size with its piece.
		best, _ := idx.Pair(p.Src, p.Dst)
		m.fits[p.Src*g+p.Dst] = best
		m.have[p.Src*g+p.Dst] = true
	}
	return m, nil
}

func (m *alphaBetaModel) Name() string { return m.name }

func (m *alphaBetaModel) gpu(port int) (int, error) {
	if m.gpuOf == nil {
		if port < 0 || port >= m.gpus {
			return 0, fmt.Errorf("alphabeta model: port %d has no GPU (identity mapping, %d GPUs calibrated)", port, m.gpus)
		}
		return port, nil
	}
	if port < 0 || port >= len(m.gpuOf) {
		return 0, fmt.Errorf("alphabeta model: port %d is not in the port-to-GPU mapping of %d ports", port, len(m.gpuOf))
	}
	return m.gpuOf[port], nil
}

func (m *alphaBetaModel) Seconds(src, dst int, bytes int64) (float64, error) {
	gs, err := m.gpu(src)
	if err != nil {
		return 0, err
	}
	gd, err := m.gpu(dst)
	if err != nil {
		return 0, err
	}
	if gs == gd && !m.have[gs*m.gpus+gd] {
		return 0, nil // never leaves the device, unless the calibration measured its loopback
	}
	if !m.have[gs*m.gpus+gd] {
		return 0, fmt.Errorf("alphabeta model: GPU pair (%d, %d) is not calibrated", gs, gd)
	}
	return m.fits[gs*m.gpus+gd].Seconds(bytes), nil
}

// MinSeconds is SplitLowerBound over the pair's fit: each piece of the fit is one line (a
// one-line fit is its own piece), so its sizes' intervals end at each piece's FromBytes and the
// size before it. A one-line fit with α ≥ 0 gives α + β·bytes.
func (m *alphaBetaModel) MinSeconds(src, dst int, bytes int64) (float64, error) {
	t := func(b int64) (float64, error) { return m.Seconds(src, dst, b) }
	var at []int64
	gs, err1 := m.gpu(src)
	gd, err2 := m.gpu(dst)
	if err1 == nil && err2 == nil && m.have[gs*m.gpus+gd] {
		for _, p := range m.fits[gs*m.gpus+gd].Pieces {
			at = append(at, p.FromBytes-1, p.FromBytes)
		}
	}
	return SplitLowerBound(bytes, at, t)
}

// Measurement is one measured transfer time: the seed's hardware emulation (§4.1) times each
// demand of a trace on the real GPUs.
type Measurement struct {
	Src     int     `json:"src"`
	Dst     int     `json:"dst"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

// MeasuredTable is a set of measured transfer times, in the JSON file form
// {"version": 1, "measurements": [...]}.
type MeasuredTable struct {
	Version      int           `json:"version"`
	Measurements []Measurement `json:"measurements"`
}

// MeasuredFormatVersion is the version of the measured-times JSON file.
const MeasuredFormatVersion = 1

type measuredModel struct {
	name  string
	pairs map[[2]int][]Measurement // sorted by bytes, distinct sizes
}

// MeasuredModel looks transfer times up in t. A size measured for the pair is used as is; any
// other size is interpolated linearly between the two nearest measured sizes of the same pair
// (extrapolated from the two nearest at either end, or scaled in proportion to bytes when the pair
// has one measurement), because a split demand (a barrier round's piece) is rarely measured
// exactly. A pair with no measurement is an error at Run.
func MeasuredModel(t *MeasuredTable) TransferModel {
	m := &measuredModel{name: "measured", pairs: map[[2]int][]Measurement{}}
	if t == nil {
		return m
	}
	for _, x := range t.Measurements {
		k := [2]int{x.Src, x.Dst}
		m.pairs[k] = append(m.pairs[k], x)
	}
	for k, xs := range m.pairs {
		slices.SortStableFunc(xs, func(a, b Measurement) int { return int(a.Bytes - b.Bytes) })
		// Repeated sizes are averaged: one number per size keeps interpolation well defined.
		var out []Measurement
		for i := 0; i < len(xs); {
			j, sum := i, 0.0
			for ; j < len(xs) && xs[j].Bytes == xs[i].Bytes; j++ {
				sum += xs[j].Seconds
			}
			x := xs[i]
			x.Seconds = sum / float64(j-i)
			out = append(out, x)
			i = j
		}
		m.pairs[k] = out
	}
	return m
}

func (m *measuredModel) Name() string { return m.name }

func (m *measuredModel) Seconds(src, dst int, bytes int64) (float64, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("measured model: %d bytes for pair (%d, %d)", bytes, src, dst)
	}
	xs := m.pairs[[2]int{src, dst}]
	switch len(xs) {
	case 0:
		return 0, fmt.Errorf("measured model: no measurement for pair (%d, %d)", src, dst)
	case 1:
		if xs[0].Bytes == bytes {
			return xs[0].Seconds, nil
		}
		if xs[0].Bytes == 0 {
			return 0, fmt.Errorf("measured model: pair (%d, %d) has only a 0-byte measurement, cannot scale to %d bytes", src, dst, bytes)
		}
		return xs[0].Seconds * float64(bytes) / float64(xs[0].Bytes), nil
	}
	i, found := slices.BinarySearchFunc(xs, bytes, func(x Measurement, b int64) int {
		switch {
		case x.Bytes < b:
			return -1
		case x.Bytes > b:
			return 1
		}
		return 0
	})
	if found {
		return xs[i].Seconds, nil
	}
	i = min(max(i, 1), len(xs)-1)
	a, b := xs[i-1], xs[i]
	t := a.Seconds + (b.Seconds-a.Seconds)*float64(bytes-a.Bytes)/float64(b.Bytes-a.Bytes)
	return max(t, 0), nil
}

// MinSeconds is SplitLowerBound over the pair's measured sizes: between two of them (and beyond
// either end) Seconds is linear, or 0 where the line falls below 0. A split piece is timed by
// interpolation or extrapolation, which can be less than its share of the measured time of the
// whole demand (a line through two sizes extrapolates to 0 below them), so the table's time for
// the demand's own size is not a lower bound on a split demand; this is.
func (m *measuredModel) MinSeconds(src, dst int, bytes int64) (float64, error) {
	xs := m.pairs[[2]int{src, dst}]
	at := make([]int64, len(xs))
	for i, x := range xs {
		at[i] = x.Bytes
	}
	return SplitLowerBound(bytes, at, func(b int64) (float64, error) { return m.Seconds(src, dst, b) })
}

// ReadMeasuredTable reads measured times from JSON (a MeasuredTable) or, when name ends in .csv,
// from CSV with the header src,dst,bytes,seconds. name prefixes every error.
func ReadMeasuredTable(r io.Reader, name string) (*MeasuredTable, error) {
	var t MeasuredTable
	if strings.EqualFold(filepath.Ext(name), ".csv") {
		rows, err := csv.NewReader(r).ReadAll()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		want := []string{"src", "dst", "bytes", "seconds"}
		if len(rows) == 0 || !slices.Equal(trimAll(rows[0]), want) {
			return nil, fmt.Errorf("%s: line 1: header must be %s", name, strings.Join(want, ","))
		}
		t.Version = MeasuredFormatVersion
		for i, row := range rows[1:] {
			var x Measurement
			var e1, e2, e3, e4 error
			x.Src, e1 = strconv.Atoi(strings.TrimSpace(row[0]))
			x.Dst, e2 = strconv.Atoi(strings.TrimSpace(row[1]))
			x.Bytes, e3 = strconv.ParseInt(strings.TrimSpace(row[2]), 10, 64)
			x.Seconds, e4 = strconv.ParseFloat(strings.TrimSpace(row[3]), 64)
			for col, err := range []error{e1, e2, e3, e4} {
				if err != nil {
					return nil, fmt.Errorf("%s: line %d, column %s: %w", name, i+2, want[col], err)
				}
			}
			t.Measurements = append(t.Measurements, x)
		}
	} else {
		dec := json.NewDecoder(r)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if t.Version != MeasuredFormatVersion {
			return nil, fmt.Errorf("%s: field version: %d is not supported (this build reads version %d)", name, t.Version, MeasuredFormatVersion)
		}
	}
	for i, x := range t.Measurements {
		if x.Src < 0 || x.Dst < 0 || x.Bytes < 0 || math.IsNaN(x.Seconds) || math.IsInf(x.Seconds, 0) || x.Seconds < 0 {
			return nil, fmt.Errorf("%s: measurements[%d]: (src %d, dst %d, %d bytes, %g s) is not a measurement", name, i, x.Src, x.Dst, x.Bytes, x.Seconds)
		}
		// The model's limits (README "Limits"): interpolation between two measurements multiplies
		// bytes by seconds, which stays exact only within them.
		if x.Bytes > schedules.MaxBytes {
			return nil, fmt.Errorf("%s: measurements[%d].bytes = %d is %w of %d bytes", name, i, x.Bytes, schedules.ErrLimit, schedules.MaxBytes)
		}
		if err := schedules.CheckSeconds(fmt.Sprintf("measurements[%d].seconds", i), x.Seconds); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return &t, nil
}

// LoadMeasuredTable reads a measured-times file from disk (JSON, or CSV by extension).
func LoadMeasuredTable(path string) (*MeasuredTable, error) {
	f, err := readlimit.Open(context.Background(), path, readlimit.Measured)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMeasuredTable(f, path)
}

func trimAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(strings.TrimSpace(s))
	}
	return out
}

// ReconfigModel is how long switch reconfigurations take. A run asks it for one Reconfigurer and
// hands that every reconfiguration command in order of request.
type ReconfigModel interface {
	// Name identifies the model in reports.
	Name() string
	// Nominal is the delay of one command issued on an idle controller; lower bounds use it as α_r.
	Nominal() float64
	// NewReconfigurer returns the state of one run's controller.
	NewReconfigurer() Reconfigurer
}

// Reconfigurer times the reconfiguration commands of one run.
type Reconfigurer interface {
	// Command issues one command, requested at time t, that sets switches switches together (calls
	// come in non-decreasing t). It returns when the switches begin to change and when they are
	// settled in their new state.
	Command(t float64, switches int) (start, end float64)
}

type parallelModel struct{ alpha float64 }

// ParallelReconfig is the seed's model: every switch change takes α_r and all changes proceed
// concurrently, however many are requested at once.
func ParallelReconfig(alphaR float64) ReconfigModel { return parallelModel{alphaR} }

func (m parallelModel) Name() string                                { return "parallel α_r=" + units.FormatSeconds(m.alpha) }
func (m parallelModel) Nominal() float64                            { return m.alpha }
func (m parallelModel) NewReconfigurer() Reconfigurer               { return m }
func (m parallelModel) Command(t float64, _ int) (float64, float64) { return t, t + m.alpha }

// ControllerTiming is the one controller model (package ctlmodel): T_r per request of at most
// Batch changes (0: no limit), requests served one at a time, T_w settling after each command,
// overlapping later commands unless SerialSettle.
type ControllerTiming = ctlmodel.Model

// ControllerReconfig is Er-El and Feitelson §2.3.3's model, T_c = T_r + T_w: one controller handles the
// requests one at a time, each taking T_r, in order of request (first come, first served); the
// settle time T_w that follows each request overlaps with later requests. A command that sets many
// switches at once (a barrier round, or everything one completion event unlocks) is one request.
// It is Controller with no batch limit and overlapping settles.
func ControllerReconfig(tr, tw float64) ReconfigModel {
	return Controller(ControllerTiming{TR: tr, TW: tw})
}

// Controller is the controller model with its batch size B and settle rule: a command of k
// changes takes ⌈k/B⌉·T_r at the one station, then T_w (see package ctlmodel). It is the model
// the fake controller, the board emulator and a live replay's prediction use too.
func Controller(m ControllerTiming) ReconfigModel { return controllerModel{m} }

type controllerModel struct{ m ctlmodel.Model }

// Name is the name ControllerReconfig always had, plus B and the settle rule where they are not
// its defaults.
func (m controllerModel) Name() string {
	s := "controller T_r=" + units.FormatSeconds(m.m.TR) + " T_w=" + units.FormatSeconds(m.m.TW)
	if m.m.Batch > 0 {
		s += " B=" + strconv.Itoa(m.m.Batch)
	}
	if m.m.SerialSettle {
		s += " serial settles"
	}
	return s
}

// Nominal is one command of one change on an idle controller.
func (m controllerModel) Nominal() float64 { return m.m.Cost(1) }
func (m controllerModel) NewReconfigurer() Reconfigurer {
	return &controllerState{m.m.NewStation()}
}

type controllerState struct{ s *ctlmodel.Station }

func (c *controllerState) Command(t float64, switches int) (float64, float64) {
	start, _, settled := c.s.Command(t, switches)
	return start, settled
}
