// Package model holds the calibration file: the per-GPU-pair α-β (Hockney) transfer model
// T(m) = α + β·m fitted on a real server (Tetris §4.2, Figure 13), piecewise where the copy path
// changes at some size, the raw medians and spread it was fitted to, the measurement plan, and
// the inventory it was measured on. It has no GPU code, so the emulator reads calibrations
// without cgo or NVML.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/internal/readlimit"
)

// FormatVersion is the calibration file version this package reads and writes.
const FormatVersion = 1

// MaxGPUs bounds the inventory a calibration may list: a reader sizes per-pair tables by it.
const MaxGPUs = 1024

// Traffic patterns a pair can be measured under.
const (
	// Isolated: one pair copies at a time.
	Isolated = "isolated"
	// Permutation: every GPU sends at once along a permutation, as one circuit round does.
	Permutation = "permutation"
)

// Calibration is the content of a calibration file.
type Calibration struct {
	Version int `json:"version"`
	// Tool is the build of tetris-hil that measured, for provenance only.
	Tool string `json:"tool,omitempty"`
	// Started and Created are when the measurement began and finished, RFC 3339.
	Started   string    `json:"started,omitempty"`
	Created   string    `json:"created,omitempty"`
	Plan      *Plan     `json:"plan,omitempty"`
	Inventory Inventory `json:"inventory"`
	// Pairs has one fit per measured ordered GPU pair and pattern. src = dst is a loopback pair:
	// copies between two worker processes on one GPU (how a one-GPU machine is calibrated).
	Pairs []PairFit `json:"pairs"`
	// Warnings are what a person should know about the measurement (throttling, say).
	Warnings []string `json:"warnings,omitempty"`
}

// Plan is what was measured and how.
type Plan struct {
	// Pairs are the ordered (src, dst) GPU pairs, in measurement order.
	Pairs [][2]int `json:"pairs"`
	// Sizes are the message sizes in bytes, increasing.
	Sizes    []int64  `json:"sizes"`
	Warmup   int      `json:"warmup"`
	Reps     int      `json:"reps"`
	Copy     string   `json:"copy"`     // "ce" or "sm"
	Patterns []string `json:"patterns"` // Isolated and/or Permutation
	// Permutations are the rounds measured under Permutation, each a set of (src, dst) pairs in
	// which every GPU sends at most once and receives at most once (by default the n−1 cyclic
	// shifts of the GPUs of Pairs).
	Permutations [][][2]int `json:"permutations,omitempty"`
	// Demand lists distinct (src, dst, bytes) transfers measured directly, besides the sweep: a
	// trace's demands, timed on the GPUs for the emulator's measured model (Tetris §4.1).
	Demand []Transfer `json:"demand,omitempty"`
	// VerifyEvery: every k-th size of each pair also checks the copied bytes (0: never).
	VerifyEvery int  `json:"verify_every"`
	LockClocks  bool `json:"lock_clocks,omitempty"`
	ClockMHz    int  `json:"clock_mhz,omitempty"`
	// Engine and EngineOptions are the transfer engine the workers ran ("cuda", or "fake" and its
	// model), so a resumed run measures the same thing.
	Engine        string `json:"engine"`
	EngineOptions string `json:"engine_options,omitempty"`
}

// Transfer is one timed transfer of a demand: GPU Src to GPU Dst, Bytes; Seconds is its median
// time once measured.
type Transfer struct {
	Src     int     `json:"src"`
	Dst     int     `json:"dst"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds,omitempty"`
}

// Equal reports whether two plans measure the same thing (what --resume checks).
func (p *Plan) Equal(q *Plan) bool {
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(q)
	return bytes.Equal(a, b)
}

// Diff names the first field in which q differs from p, for an error message; "" if none.
func (p *Plan) Diff(q *Plan) string {
	var a, b map[string]json.RawMessage
	ja, _ := json.Marshal(p)
	jb, _ := json.Marshal(q)
	_ = json.Unmarshal(ja, &a)
	_ = json.Unmarshal(jb, &b)
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !bytes.Equal(a[k], b[k]) {
			return fmt.Sprintf("plan.%s: %s here, %s in the file", k, brief(a[k]), brief(b[k]))
		}
	}
	return ""
}

func brief(b json.RawMessage) string {
	s := string(b)
	if s == "" {
		s = "absent"
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// Inventory summarises the machine a calibration was taken on: a calibration only predicts the
// machine it describes, so a reader can compare this against the machine in hand.
type Inventory struct {
	Host   string `json:"host,omitempty"`
	Driver string `json:"driver,omitempty"`
	CUDA   string `json:"cuda,omitempty"`
	GPUs   []GPU  `json:"gpus"`
	// Links names the interconnect between ordered pairs as NVML reports it (e.g. "NV18",
	// "PHB"), keyed "src-dst".
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

// PairFit is the α-β fit for transfers from GPU Src to GPU Dst under one traffic pattern.
//
// Alpha and Beta are the one-line fit T(m) = α + β·m; where one line does not fit (a knee: the
// copy path changes at some size) Pieces holds the piecewise fit, Alpha and Beta are its first
// piece's (what small messages pay) and Bandwidth is the last piece's (what large ones get).
type PairFit struct {
	Src     int    `json:"src"`
	Dst     int    `json:"dst"`
	Pattern string `json:"pattern,omitempty"` // Isolated (the default when empty) or Permutation
	// Alpha is the fixed cost of one transfer, seconds.
	Alpha float64 `json:"alpha_seconds"`
	// Beta is the cost per byte, seconds per byte.
	Beta float64 `json:"beta_seconds_per_byte"`
	// Bandwidth is 1/β of the largest sizes, bytes per second (0 in files that predate it).
	Bandwidth float64 `json:"bandwidth_bytes_per_second,omitempty"`
	// R2 is the coefficient of determination of the fit on Medians (1 is a perfect line),
	// weighted by relative error like the fit.
	R2 float64 `json:"r2"`
	// MaxRelResidual is the largest |measured − fitted| / fitted over the medians kept.
	MaxRelResidual float64 `json:"max_rel_residual,omitempty"`
	// MStar is α/β in bytes: below it the fixed cost dominates a transfer's time.
	MStar float64 `json:"m_star_bytes,omitempty"`
	// TheilSen is the median-of-slopes cross-check of the one-line fit.
	TheilSen *Line `json:"theil_sen,omitempty"`
	// Pieces is the piecewise fit, ordered by size; empty when one line fits.
	Pieces []Piece `json:"pieces,omitempty"`
	// Outliers are the sizes whose medians the outlier rule rejected.
	Outliers []int64 `json:"outliers,omitempty"`
	// Throttled lists the throttle reasons (other than idle and clock settings) seen while the
	// pair was measured; not empty means its numbers are suspect.
	Throttled []string `json:"throttled,omitempty"`
	// Medians are the measured points the fit was made on.
	Medians []Median `json:"medians,omitempty"`
}

// Line is α + β·m.
type Line struct {
	Alpha float64 `json:"alpha_seconds"`
	Beta  float64 `json:"beta_seconds_per_byte"`
}

// Seconds is the line's time for m bytes.
func (l Line) Seconds(m int64) float64 { return l.Alpha + l.Beta*float64(m) }

// Piece is one line of a piecewise fit: it predicts sizes from FromBytes up to the next piece's
// FromBytes (the first piece from 0, the last without end). MinBytes..MaxBytes are the measured
// sizes it was fitted to. Only the first piece's α is a cost at 0 bytes; a later piece's is the
// intercept of its line and may be negative.
type Piece struct {
	FromBytes int64   `json:"from_bytes"`
	MinBytes  int64   `json:"min_bytes"`
	MaxBytes  int64   `json:"max_bytes"`
	Alpha     float64 `json:"alpha_seconds"`
	Beta      float64 `json:"beta_seconds_per_byte"`
	R2        float64 `json:"r2"`
}

// Median is the median and spread of the repetitions of one message size.
type Median struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// Repetitions is how many timed transfers the median is taken over.
	Repetitions int `json:"repetitions,omitempty"`
	// P25, P75, Min and Max describe the spread of the repetitions, seconds.
	P25 float64 `json:"p25_seconds,omitempty"`
	P75 float64 `json:"p75_seconds,omitempty"`
	Min float64 `json:"min_seconds,omitempty"`
	Max float64 `json:"max_seconds,omitempty"`
	// Verified says the copied bytes of this size were checked (and were right).
	Verified bool `json:"verified,omitempty"`
	// Telemetry is the sending GPU's state right after this size.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
}

// Telemetry is a GPU's temperature, clocks and throttle reasons at one moment.
type Telemetry struct {
	TemperatureC    int      `json:"temperature_c"`
	SMClockMHz      int      `json:"sm_clock_mhz"`
	MemClockMHz     int      `json:"mem_clock_mhz"`
	ThrottleReasons []string `json:"throttle_reasons,omitempty"`
	// Unavailable names the readings NVML could not give (their zeros above are no reading).
	Unavailable []string `json:"unavailable,omitempty"`
}

// Seconds is the fitted time to move bytes: α + β·bytes of the piece that covers bytes.
func (p PairFit) Seconds(bytes int64) float64 {
	if len(p.Pieces) == 0 {
		return p.Alpha + p.Beta*float64(bytes)
	}
	pc := p.Piece(bytes)
	return pc.Alpha + pc.Beta*float64(bytes)
}

// Piece returns the piece that covers bytes (a one-line fit is its own single piece).
func (p PairFit) Piece(bytes int64) Piece {
	if len(p.Pieces) == 0 {
		return Piece{Alpha: p.Alpha, Beta: p.Beta, R2: p.R2}
	}
	i := sort.Search(len(p.Pieces), func(i int) bool { return p.Pieces[i].FromBytes > bytes }) - 1
	return p.Pieces[max(i, 0)]
}

// PatternName is the pair's pattern, Isolated when the field is empty.
func (p PairFit) PatternName() string {
	if p.Pattern == "" {
		return Isolated
	}
	return p.Pattern
}

// GPUs is the number of GPUs the calibration covers: its inventory's. A valid calibration names
// no GPU outside it.
func (c *Calibration) GPUs() int { return len(c.Inventory.GPUs) }

// Patterns lists the patterns the pairs were measured under, Isolated first.
func (c *Calibration) Patterns() []string {
	var out []string
	for _, want := range []string{Isolated, Permutation} {
		for _, p := range c.Pairs {
			if p.PatternName() == want {
				out = append(out, want)
				break
			}
		}
	}
	return out
}

// Pair returns the fit for the ordered pair (src, dst): under Permutation where measured, since
// concurrent copies are what a schedule's circuits see, else under Isolated.
func (c *Calibration) Pair(src, dst int) (PairFit, bool) {
	if p, ok := c.PairUnder(src, dst, Permutation); ok {
		return p, true
	}
	return c.PairUnder(src, dst, Isolated)
}

// PairUnder returns the fit for (src, dst) measured under pattern. It scans the pairs; for a
// lookup per pair use Index.
func (c *Calibration) PairUnder(src, dst int, pattern string) (PairFit, bool) {
	for _, p := range c.Pairs {
		if p.Src == src && p.Dst == dst && p.PatternName() == pattern {
			return p, true
		}
	}
	return PairFit{}, false
}

// PairIndex finds a calibration's fits by GPU pair and pattern in constant time: a dense table
// over the inventory's GPUs (at the 1024-GPU limit, 8 MiB), built in one pass over the pairs.
// It reads the calibration as it was when indexed.
type PairIndex struct {
	c    *Calibration
	gpus int
	at   []int32 // (src·gpus + dst)·2 + pattern (0 Isolated, 1 Permutation) → pair + 1; 0: none
}

// Index indexes c's pairs. A pair outside the inventory or under an unknown pattern (which
// Validate refuses) is left out; a repeated one keeps its first fit, as PairUnder finds it.
func (c *Calibration) Index() PairIndex {
	g := c.GPUs()
	x := PairIndex{c: c, gpus: g, at: make([]int32, 2*g*g)}
	for i, p := range c.Pairs {
		if k, ok := x.slot(p.Src, p.Dst, p.PatternName()); ok && x.at[k] == 0 {
			x.at[k] = int32(i + 1)
		}
	}
	return x
}

func (x PairIndex) slot(src, dst int, pattern string) (int, bool) {
	pat := 0
	switch pattern {
	case Isolated:
	case Permutation:
		pat = 1
	default:
		return 0, false
	}
	if src < 0 || dst < 0 || src >= x.gpus || dst >= x.gpus {
		return 0, false
	}
	return (src*x.gpus+dst)*2 + pat, true
}

// PairUnder is Calibration.PairUnder by the index.
func (x PairIndex) PairUnder(src, dst int, pattern string) (PairFit, bool) {
	if k, ok := x.slot(src, dst, pattern); ok && x.at[k] != 0 {
		return x.c.Pairs[x.at[k]-1], true
	}
	return PairFit{}, false
}

// Pair is Calibration.Pair by the index.
func (x PairIndex) Pair(src, dst int) (PairFit, bool) {
	if p, ok := x.PairUnder(src, dst, Permutation); ok {
		return p, true
	}
	return x.PairUnder(src, dst, Isolated)
}

// GPUIndex resolves a GPU named by its index, PCI bus id or UUID against the inventory. The
// error names both the GPU asked for and the GPUs the calibration was taken on.
func (c *Calibration) GPUIndex(name string) (int, error) {
	name = strings.TrimSpace(name)
	if i, err := strconv.Atoi(name); err == nil {
		if i >= 0 && i < len(c.Inventory.GPUs) {
			return i, nil
		}
		return 0, fmt.Errorf("GPU %d is not among the GPUs the calibration was taken on (%s)", i, c.describeGPUs())
	}
	for _, g := range c.Inventory.GPUs {
		if strings.EqualFold(g.UUID, name) || (g.PCIBusID != "" && sameBusID(g.PCIBusID, name)) {
			return g.Index, nil
		}
	}
	return 0, fmt.Errorf("GPU %q is not among the GPUs the calibration was taken on (%s)", name, c.describeGPUs())
}

// sameBusID compares PCI bus ids ignoring case and the width of the domain ("0000:5d:00.0" and
// "00000000:5D:00.0" are one device).
func sameBusID(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(s)
		if dom, rest, ok := strings.Cut(s, ":"); ok && strings.Count(s, ":") == 2 {
			dom = strings.TrimLeft(dom, "0")
			return dom + ":" + rest
		}
		return s
	}
	return norm(a) == norm(b)
}

func (c *Calibration) describeGPUs() string {
	if len(c.Inventory.GPUs) == 0 {
		return "an empty inventory"
	}
	var parts []string
	for _, g := range c.Inventory.GPUs {
		id := g.PCIBusID
		if id == "" {
			id = g.UUID
		}
		if id == "" {
			id = g.Name
		}
		parts = append(parts, fmt.Sprintf("%d %s", g.Index, id))
	}
	host := ""
	if c.Inventory.Host != "" {
		host = " on " + c.Inventory.Host
	}
	return fmt.Sprintf("%d GPUs%s: %s", len(c.Inventory.GPUs), host, strings.Join(parts, ", "))
}

// GPUMap resolves a comma-separated port-to-GPU map (each entry an index, PCI bus id or UUID)
// against the inventory; "" is the identity (nil).
func (c *Calibration) GPUMap(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []int
	for i, e := range strings.Split(list, ",") {
		g, err := c.GPUIndex(e)
		if err != nil {
			return nil, fmt.Errorf("port %d: %w", i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// Validate checks every field a model reader relies on and names the first bad one.
func (c *Calibration) Validate() error {
	if c.Version != FormatVersion {
		return fmt.Errorf("field version: %d is not supported (this build reads version %d)", c.Version, FormatVersion)
	}
	n := len(c.Inventory.GPUs)
	if n > MaxGPUs {
		return fmt.Errorf("field inventory.gpus: %d GPUs, more than the %d this build reads", n, MaxGPUs)
	}
	for i, g := range c.Inventory.GPUs {
		if g.Index != i {
			return fmt.Errorf("field inventory.gpus[%d].index: %d, want %d (GPUs are listed in index order)", i, g.Index, i)
		}
	}
	// One flag per pair and pattern (a dense table: a million pairs at the GPU limit).
	seen := make([]bool, 2*n*n)
	for i, p := range c.Pairs {
		if err := p.validate(n, seen); err != nil {
			return fmt.Errorf("field pairs[%d]%w", i, err)
		}
	}
	if c.Plan != nil {
		if err := c.Plan.validate(n); err != nil {
			return fmt.Errorf("field plan.%w", err)
		}
	}
	return nil
}

// fieldError is the tail of a "field pairs[i]" message: ".name: detail" or ": detail".
func fieldError(field, format string, args ...any) error {
	if field != "" {
		field = "." + field
	}
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

func (p PairFit) validate(n int, seen []bool) error {
	if p.Src < 0 || p.Dst < 0 || p.Src >= n || p.Dst >= n {
		return fieldError("", "GPU pair (%d, %d) is outside the inventory of %d GPUs", p.Src, p.Dst, n)
	}
	pat := p.PatternName()
	if pat != Isolated && pat != Permutation {
		return fieldError("pattern", "%q is not a traffic pattern (want %s or %s)", p.Pattern, Isolated, Permutation)
	}
	k := (p.Src*n + p.Dst) * 2
	if pat == Permutation {
		k++
	}
	if seen[k] {
		return fieldError("", "GPU pair (%d, %d) appears twice under pattern %s", p.Src, p.Dst, pat)
	}
	seen[k] = true
	if err := checkLine("", p.Alpha, p.Beta); err != nil {
		return err
	}
	if math.IsNaN(p.R2) || p.R2 > 1 {
		return fieldError("r2", "%g is not a coefficient of determination (≤ 1)", p.R2)
	}
	for name, v := range map[string]float64{"bandwidth_bytes_per_second": p.Bandwidth, "max_rel_residual": p.MaxRelResidual, "m_star_bytes": p.MStar} {
		if !finite(v) || v < 0 {
			return fieldError(name, "%g is not a non-negative number", v)
		}
	}
	if p.TheilSen != nil && (!finite(p.TheilSen.Alpha) || !finite(p.TheilSen.Beta)) {
		return fieldError("theil_sen", "α %g, β %g are not numbers", p.TheilSen.Alpha, p.TheilSen.Beta)
	}
	for j, pc := range p.Pieces {
		f := fmt.Sprintf("pieces[%d]", j)
		if j == 0 {
			if err := checkLine(f+".", pc.Alpha, pc.Beta); err != nil {
				return err
			}
		} else if !finite(pc.Alpha) || !finite(pc.Beta) || pc.Beta <= 0 || pc.Alpha+pc.Beta*float64(pc.FromBytes) <= 0 {
			// A later piece's line may cut the axis below zero; it must give a positive time
			// where it starts.
			return fieldError(f, "α %g s, β %g s/B from %d bytes is not a positive, growing time", pc.Alpha, pc.Beta, pc.FromBytes)
		}
		if j == 0 && pc.FromBytes != 0 {
			return fieldError(f+".from_bytes", "%d, want 0 (the first piece starts at 0 bytes)", pc.FromBytes)
		}
		if j > 0 && pc.FromBytes <= p.Pieces[j-1].FromBytes {
			return fieldError(f+".from_bytes", "%d is not above the previous piece's %d", pc.FromBytes, p.Pieces[j-1].FromBytes)
		}
		if pc.MinBytes < 0 || pc.MaxBytes < pc.MinBytes {
			return fieldError(f, "covers %d..%d bytes", pc.MinBytes, pc.MaxBytes)
		}
	}
	for j, m := range p.Medians {
		if m.Bytes < 0 || !finite(m.Seconds) || m.Seconds < 0 || m.Repetitions < 0 {
			return fieldError(fmt.Sprintf("medians[%d]", j), "%d bytes in %g s over %d repetitions is not a measurement", m.Bytes, m.Seconds, m.Repetitions)
		}
		for _, v := range []float64{m.P25, m.P75, m.Min, m.Max} {
			if !finite(v) || v < 0 {
				return fieldError(fmt.Sprintf("medians[%d]", j), "spread value %g is not a time", v)
			}
		}
	}
	return nil
}

func checkLine(prefix string, alpha, beta float64) error {
	if !finite(alpha) || alpha < 0 {
		return fieldError(prefix+"alpha_seconds", "%g is not a non-negative time", alpha)
	}
	if !finite(beta) || beta <= 0 {
		return fieldError(prefix+"beta_seconds_per_byte", "%g is not a positive cost per byte", beta)
	}
	return nil
}

func (p *Plan) validate(n int) error {
	for i, pr := range p.Pairs {
		if pr[0] < 0 || pr[1] < 0 || pr[0] >= n || pr[1] >= n {
			return fmt.Errorf("pairs[%d]: GPU pair (%d, %d) is outside the inventory of %d GPUs", i, pr[0], pr[1], n)
		}
	}
	for i, s := range p.Sizes {
		if s <= 0 || (i > 0 && s <= p.Sizes[i-1]) {
			return fmt.Errorf("sizes[%d]: %d bytes (sizes are positive and increasing)", i, s)
		}
	}
	if p.Reps <= 0 || p.Warmup < 0 || p.VerifyEvery < 0 {
		return fmt.Errorf("reps: %d with warmup %d and verify_every %d (want reps > 0, the others >= 0)", p.Reps, p.Warmup, p.VerifyEvery)
	}
	if p.Copy != "ce" && p.Copy != "sm" {
		return fmt.Errorf("copy: %q (want ce or sm)", p.Copy)
	}
	for i, pat := range p.Patterns {
		if pat != Isolated && pat != Permutation {
			return fmt.Errorf("patterns[%d]: %q (want %s or %s)", i, pat, Isolated, Permutation)
		}
	}
	for i, perm := range p.Permutations {
		srcs, dsts := map[int]bool{}, map[int]bool{}
		for j, pr := range perm {
			if pr[0] < 0 || pr[1] < 0 || pr[0] >= n || pr[1] >= n || srcs[pr[0]] || dsts[pr[1]] {
				return fmt.Errorf("permutations[%d][%d]: (%d, %d) is outside the inventory of %d GPUs or repeats a sender or receiver", i, j, pr[0], pr[1], n)
			}
			srcs[pr[0]], dsts[pr[1]] = true, true
		}
	}
	for i, t := range p.Demand {
		if t.Src < 0 || t.Dst < 0 || t.Src >= n || t.Dst >= n || t.Bytes <= 0 || !finite(t.Seconds) || t.Seconds < 0 {
			return fmt.Errorf("demand[%d]: %d bytes from GPU %d to GPU %d (GPUs of the inventory of %d, bytes > 0)", i, t.Bytes, t.Src, t.Dst, n)
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Read decodes and validates a calibration; name (a file name) prefixes every error. Unknown
// fields, a missing version (another tool's JSON), a wrong type, trailing data and a file cut short
// are all errors that say where.
func Read(r io.Reader, name string) (*Calibration, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func decode(data []byte) (*Calibration, error) {
	var top map[string]json.RawMessage
	first := json.NewDecoder(bytes.NewReader(data))
	if err := first.Decode(&top); err != nil {
		return nil, jsonError(data, err)
	}
	if first.More() {
		return nil, errors.New("trailing data after the calibration object")
	}
	if _, ok := top["version"]; !ok {
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("field version: missing: not a calibration file (its top-level fields are %s)", strings.Join(keys, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the calibration object")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// jsonError says where a decoding error is: the field and value for a wrong type, the byte offset
// for a syntax error, the length for a file cut short.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Offset >= int64(len(bytes.TrimSpace(data)))):
		return fmt.Errorf("truncated: the JSON ends after %d bytes, inside an object or array: %w", len(data), err)
	case errors.As(err, &syn):
		return fmt.Errorf("not JSON at byte %d: %w", syn.Offset, err)
	case errors.As(err, &typ):
		return fmt.Errorf("field %s: a JSON %s where a %s belongs: %w", typ.Field, typ.Value, typ.Type, err)
	}
	return err
}

// Load reads a calibration file from disk.
func Load(path string) (*Calibration, error) { return LoadContext(context.Background(), path) }

// LoadContext reads a calibration file from disk within readlimit's limit for a calibration
// (a regular file only), stopping with ctx's error once ctx is done.
func LoadContext(ctx context.Context, path string) (*Calibration, error) {
	data, err := readlimit.ReadFile(ctx, path, readlimit.Calibration)
	if err != nil {
		return nil, err
	}
	c, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Write encodes c as indented JSON after validating it, so no invalid file is ever written.
func (c *Calibration) Write(w io.Writer) error {
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Marshal is the file's bytes: c validated and encoded as indented JSON.
func (c *Calibration) Marshal() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SortPairs orders the pairs by pattern (Isolated first), then source, then destination, the
// order files are written in.
func (c *Calibration) SortPairs() {
	rank := func(p PairFit) int { return slices.Index([]string{Isolated, Permutation}, p.PatternName()) }
	slices.SortStableFunc(c.Pairs, func(a, b PairFit) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		if a.Src != b.Src {
			return a.Src - b.Src
		}
		return a.Dst - b.Dst
	})
}
