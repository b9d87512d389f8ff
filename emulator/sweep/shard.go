package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Sharding splits a grid into deterministic slices for separate processes or machines (a Slurm
// job array: one shard per task) and joins them back into exactly the files one run writes.
// The grid's units (one matrix in one cell, every algorithm on it) are numbered cell-major;
// shard K of N takes units [K·U/N, (K+1)·U/N). A unit's numbers do not depend on which process
// computes it, and the merge sums them in the same order as an unsharded run, so the merged CSV
// is byte-identical to it.

// Shard is the Index-th (from 0) of Count slices of a grid.
type Shard struct{ Index, Count int }

// ParseShard reads "K/N" (0 ≤ K < N).
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, the K-th (from 0) of N slices", s)
	}
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want K/N with whole numbers K and N", s)
	}
	sh := Shard{ki, ni}
	if err := sh.check(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

func (s Shard) check() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want K/N with N ≥ 1 and 0 ≤ K < N", s.Index, s.Count)
	}
	return nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// span is the range of units [lo, hi) of s among total.
func (s Shard) span(total int) (lo, hi int) {
	return s.Index * total / s.Count, (s.Index + 1) * total / s.Count
}

// ShardVersion is the version of the shard file.
const ShardVersion = 1

// ShardFileName is the file a shard run writes into its output directory.
const ShardFileName = "sweep-shard.json"

// ShardFile is one shard's results: what sweep merge joins.
type ShardFile struct {
	Version int `json:"version"`
	Shard   int `json:"shard"`
	Shards  int `json:"shards"`
	// Units is the number of units of the whole grid; this shard holds FirstUnit up to
	// FirstUnit+len(Results).
	Units     int `json:"units"`
	FirstUnit int `json:"first_unit"`
	// DemandSHA256 fingerprints the matrices swept (after --layer, --phase and --matrix
	// selected them), so shards of different selections from one file are told apart.
	DemandSHA256 string `json:"demand_sha256"`
	// Manifest is the sweep.json an unsharded run of the same grid would write.
	Manifest *Manifest  `json:"manifest"`
	Results  []UnitFile `json:"results"`

	// Path and SHA256 are the file it was read from (ReadShard).
	Path   string `json:"-"`
	SHA256 string `json:"-"`
}

// UnitFile is one matrix in one cell: its lower bound and every algorithm's completion, in
// seconds, in the manifest's algorithm order, and (absent in files written before they were
// recorded) every algorithm's switch state changes, in total and per switch as
// [stage, index, count] of the switches that changed.
type UnitFile struct {
	Bandwidth             int                      `json:"bandwidth_index"`
	Reconfig              int                      `json:"reconfig_index"`
	Matrix                int                      `json:"matrix"`
	LowerBound            float64                  `json:"lower_bound_seconds"`
	Completions           []float64                `json:"completion_seconds"`
	StateChanges          []int                    `json:"state_changes,omitempty"`
	StateChangesPerSwitch [][]emulator.SwitchCount `json:"state_changes_per_switch,omitempty"`
	// TenantCompletions are, in a multi-tenant sweep, every algorithm's tenants' completions,
	// in the manifest's tenant order.
	TenantCompletions [][]float64 `json:"tenant_completion_seconds,omitempty"`
}

// file is u as unit (bandwidth b, α_r r, matrix m) of a shard file.
func (u unitResult) file(b, r, m int) UnitFile {
	return UnitFile{Bandwidth: b, Reconfig: r, Matrix: m, LowerBound: u.lowerBound, Completions: u.completions,
		StateChanges: u.changes, StateChangesPerSwitch: u.perSwitch, TenantCompletions: u.tenants}
}

// unit is the unit a shard file's entry holds.
func (u *UnitFile) unit() unitResult {
	return unitResult{lowerBound: u.LowerBound, completions: u.Completions, changes: u.StateChanges, perSwitch: u.StateChangesPerSwitch,
		tenants: u.TenantCompletions}
}

// checkTenantTimes holds an entry's tenants' completions to one per tenant (nt of them) for
// every algorithm, each a time within the model's limit, none after the fabric's.
func (u *UnitFile) checkTenantTimes(k, nt int) error {
	if nt == 0 && u.TenantCompletions == nil {
		return nil
	}
	if len(u.TenantCompletions) != len(u.Completions) {
		return fmt.Errorf("results[%d]: field tenant_completion_seconds: %d entries for %d completions of %d tenants",
			k, len(u.TenantCompletions), len(u.Completions), nt)
	}
	for a, ts := range u.TenantCompletions {
		if len(ts) != nt {
			return fmt.Errorf("results[%d].tenant_completion_seconds[%d]: %d completions for %d tenants", k, a, len(ts), nt)
		}
		for i, c := range ts {
			if err := schedules.CheckSeconds(fmt.Sprintf("results[%d].tenant_completion_seconds[%d][%d]", k, a, i), c); err != nil {
				return err
			}
			if c > u.Completions[a] {
				return fmt.Errorf("results[%d].tenant_completion_seconds[%d][%d]: %g s is after the fabric's completion of %g s", k, a, i, c, u.Completions[a])
			}
		}
	}
	return nil
}

// checkChanges holds an entry's state changes (when it has them) to what a run writes: one total
// and one list per algorithm, every count positive, each list summing to its total.
func (u *UnitFile) checkChanges(k int) error {
	if u.StateChanges == nil && u.StateChangesPerSwitch == nil {
		return nil
	}
	if len(u.StateChanges) != len(u.Completions) || len(u.StateChangesPerSwitch) != len(u.Completions) {
		return fmt.Errorf("results[%d]: fields state_changes and state_changes_per_switch: %d and %d entries for %d completions",
			k, len(u.StateChanges), len(u.StateChangesPerSwitch), len(u.Completions))
	}
	for a, total := range u.StateChanges {
		sum := 0
		for _, c := range u.StateChangesPerSwitch[a] {
			if c.Count < 1 || c.Count > MaxUnits || c.Stage < -1 || c.Index < 0 {
				return fmt.Errorf("results[%d].state_changes_per_switch[%d]: [%d, %d, %d] is not a switch that changed", k, a, c.Stage, c.Index, c.Count)
			}
			sum += c.Count
		}
		if total < 0 || sum != total {
			return fmt.Errorf("results[%d].state_changes[%d]: %d, but its switches' changes sum to %d", k, a, total, sum)
		}
	}
	return nil
}

// ShardSource is one merged shard in the merged manifest.
type ShardSource struct {
	Shard  int                `json:"shard"`
	Shards int                `json:"shards"`
	File   string             `json:"file"`
	SHA256 string             `json:"sha256"`
	Inputs []provenance.Input `json:"inputs"`
}

// DemandFingerprint is the SHA-256 of the matrices: count, then per matrix its size, whether the
// diagonal counts, and its entries, as little-endian integers.
func DemandFingerprint(demands []*schedules.Demand) string {
	h := sha256.New()
	var buf [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	put(int64(len(demands)))
	for _, d := range demands {
		put(int64(d.N()))
		if d.CountDiagonal {
			put(1)
		} else {
			put(0)
		}
		for _, row := range d.Bytes {
			for _, v := range row {
				put(v)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RunShard runs shard sh of the grid of cfg over demands, as Run would run the whole grid, and
// returns its results with the manifest an unsharded run would write (tool and inputs as given).
func RunShard(ctx context.Context, demands []*schedules.Demand, cfg Config, sh Shard, tool string, inputs []provenance.Input) (*ShardFile, error) {
	if err := sh.check(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if err := cfg.check(demands); err != nil {
		return nil, err
	}
	nm, nr := len(demands), len(cfg.Reconfigs)
	total := cfg.units(nm)
	lo, hi := sh.span(total)
	us, err := runUnits(ctx, demands, cfg, lo, hi)
	if err != nil {
		return nil, err
	}
	skeleton := cfg.skeleton(nm)
	sf := &ShardFile{Version: ShardVersion, Shard: sh.Index, Shards: sh.Count, Units: total, FirstUnit: lo,
		DemandSHA256: DemandFingerprint(demands), Manifest: NewManifest(skeleton, cfg, tool, inputs),
		Results: make([]UnitFile, len(us))}
	for k, u := range us {
		c, m := (lo+k)/nm, (lo+k)%nm
		sf.Results[k] = u.file(c/nr, c%nr, m)
	}
	return sf, nil
}

// ShardError is a shard file that is not what RunShard writes, or shards that do not join into
// one sweep: bad input, as a command line reports it.
type ShardError struct{ Err error }

func (e *ShardError) Error() string { return e.Err.Error() }
func (e *ShardError) Unwrap() error { return e.Err }

// ReadShard reads a shard file, or the ShardFileName in a directory.
func ReadShard(path string) (*ShardFile, error) { return readShard(path, false) }

// ReadPartial reads the partial file of an interrupted sweep (PartialName): a shard file whose
// results are the first units of its span, checked as strictly as a shard's.
func ReadPartial(path string) (*ShardFile, error) { return readShard(path, true) }

func readShard(path string, partial bool) (*ShardFile, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = path + string(os.PathSeparator) + ShardFileName
	}
	b, err := readlimit.ReadFile(context.Background(), path, readlimit.Shard)
	if err != nil {
		return nil, fmt.Errorf("sweep shard: %w", err)
	}
	var sf ShardFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf); err != nil {
		return nil, &ShardError{fmt.Errorf("sweep shard %s: %w", path, err)}
	}
	if sf.Version != ShardVersion {
		return nil, &ShardError{fmt.Errorf("sweep shard %s: field version: %d is not the supported %d", path, sf.Version, ShardVersion)}
	}
	if sf.Manifest == nil {
		return nil, &ShardError{fmt.Errorf("sweep shard %s: field manifest is missing", path)}
	}
	if err := sf.check(partial); err != nil {
		return nil, &ShardError{fmt.Errorf("sweep shard %s: %w", path, err)}
	}
	sum := sha256.Sum256(b)
	sf.Path, sf.SHA256 = path, hex.EncodeToString(sum[:])
	return &sf, nil
}

// The largest shard count and grid a shard file may state (a Slurm job array stops far below
// the first; the second is a week of runs at a microsecond each): K·units stays exact.
const (
	MaxShards = 1 << 22
	MaxUnits  = 1 << 40
)

// check holds a shard file read back to what RunShard writes, before any count in it sizes
// anything: a shard K/N with 0 ≤ K < N ≤ units, its results the units of its span, and every
// time a time within the model's limit; under the bandwidth transfer model, at which the bounds
// are taken, no completion below its unit's lower bound. A partial file may hold only the first
// units of its span.
func (sf *ShardFile) check(partial bool) error {
	if sf.Units < 1 || sf.Units > MaxUnits || sf.Shards < 1 || sf.Shards > MaxShards || sf.Shard < 0 || sf.Shard >= sf.Shards {
		return fmt.Errorf("fields shard, shards, units: shard %d of %d over %d units, want 0 ≤ shard < shards ≤ %d and 1 ≤ units ≤ %d",
			sf.Shard, sf.Shards, sf.Units, MaxShards, MaxUnits)
	}
	lo, hi := Shard{sf.Shard, sf.Shards}.span(sf.Units)
	if sf.FirstUnit != lo || len(sf.Results) > hi-lo || !partial && len(sf.Results) != hi-lo {
		return fmt.Errorf("holds units %d..%d of %d, but shard %d/%d is units %d..%d",
			sf.FirstUnit, sf.FirstUnit+len(sf.Results), sf.Units, sf.Shard, sf.Shards, lo, hi)
	}
	bounded := strings.HasPrefix(sf.Manifest.Transfer, "bandwidth")
	for k, u := range sf.Results {
		if err := u.checkChanges(k); err != nil {
			return err
		}
		if err := u.checkTenantTimes(k, len(sf.Manifest.Tenants)); err != nil {
			return err
		}
		if err := schedules.CheckSeconds(fmt.Sprintf("results[%d].lower_bound_seconds", k), u.LowerBound); err != nil {
			return err
		}
		for a, c := range u.Completions {
			if err := schedules.CheckSeconds(fmt.Sprintf("results[%d].completion_seconds[%d]", k, a), c); err != nil {
				return err
			}
			// The bound holds for the run's own models; a last-digit difference is rounding.
			if bounded && c < u.LowerBound*(1-1e-9) {
				return fmt.Errorf("results[%d].completion_seconds[%d]: %g s is below the unit's lower bound of %g s", k, a, c, u.LowerBound)
			}
		}
	}
	return nil
}

// comparable is m without what may differ between shards of one sweep: where each shard found
// its inputs (their hashes must agree) and the shard list.
func (m *Manifest) comparable() ([]byte, error) {
	c := *m
	c.Inputs = make([]provenance.Input, len(m.Inputs))
	for i, in := range m.Inputs {
		c.Inputs[i] = provenance.Input{Role: in.Role, SHA256: in.SHA256}
		if in.SHA256 == "" {
			c.Inputs[i].Path = in.Path // built-in inputs are told apart by name
		}
	}
	c.Shards = nil
	return json.Marshal(&c)
}

// Merge joins the shards of one sweep (in any order) into the Result and the manifest an
// unsharded run writes, the manifest listing every shard's file, hash and inputs. It refuses
// shards from different inputs, grids, models or tools, a missing or repeated shard, and
// results that do not cover the grid exactly.
func Merge(shards []*ShardFile) (*Result, *Manifest, error) {
	res, m, err := merge(shards)
	if err != nil {
		return nil, nil, &ShardError{err}
	}
	return res, m, nil
}

func merge(shards []*ShardFile) (*Result, *Manifest, error) {
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("sweep merge: no shards")
	}
	first := shards[0]
	want, err := first.Manifest.comparable()
	if err != nil {
		return nil, nil, fmt.Errorf("sweep merge: %w", err)
	}
	mf := first.Manifest
	nm, nb, nr, na := mf.Matrices, len(mf.Bandwidths), len(mf.Reconfigs), len(mf.Algorithms)
	// Nothing is sized by a count a file states before the files are known to hold it: the
	// grid's product is checked for overflow, shards are kept by index in a map, and the units
	// are allocated once every shard is present, when they are the results the files hold.
	if nm < 1 || na < 1 || nb < 1 || nr < 1 || nm > MaxUnits/(nb*nr) || first.Units != nb*nr*nm {
		return nil, nil, fmt.Errorf("sweep merge: %s: field units: %d, but the grid has %d bandwidths × %d delays × %d matrices",
			first.Path, first.Units, nb, nr, nm)
	}
	total := nb * nr * nm
	seen := map[int]*ShardFile{}
	for _, sf := range shards {
		got, err := sf.Manifest.comparable()
		if err != nil {
			return nil, nil, fmt.Errorf("sweep merge: %w", err)
		}
		switch {
		case !bytes.Equal(got, want):
			return nil, nil, fmt.Errorf("sweep merge: %s and %s come from different sweeps: %s",
				first.Path, sf.Path, fieldDiff(want, got))
		case sf.DemandSHA256 != first.DemandSHA256:
			return nil, nil, fmt.Errorf("sweep merge: %s and %s swept different matrices (field demand_sha256: %s, %s)",
				first.Path, sf.Path, first.DemandSHA256, sf.DemandSHA256)
		case sf.Shards != first.Shards:
			return nil, nil, fmt.Errorf("sweep merge: %s is shard %d/%d but %s is shard %d/%d: different shard counts",
				first.Path, first.Shard, first.Shards, sf.Path, sf.Shard, sf.Shards)
		case sf.Shards < 1 || sf.Shards > MaxShards || sf.Shard < 0 || sf.Shard >= sf.Shards:
			return nil, nil, fmt.Errorf("sweep merge: %s: field shard: %d/%d is not K/N with 0 ≤ K < N ≤ %d", sf.Path, sf.Shard, sf.Shards, MaxShards)
		case seen[sf.Shard] != nil:
			return nil, nil, fmt.Errorf("sweep merge: %s and %s are both shard %d/%d", seen[sf.Shard].Path, sf.Path, sf.Shard, sf.Shards)
		}
		seen[sf.Shard] = sf
		lo, hi := Shard{sf.Shard, sf.Shards}.span(total)
		if sf.Units != total || sf.FirstUnit != lo || len(sf.Results) != hi-lo {
			return nil, nil, fmt.Errorf("sweep merge: %s: holds units %d..%d of %d, but shard %d/%d is units %d..%d",
				sf.Path, sf.FirstUnit, sf.FirstUnit+len(sf.Results), sf.Units, sf.Shard, sf.Shards, lo, hi)
		}
	}
	if len(seen) != first.Shards {
		k := 0 // the first shard missing, within len(seen)+1 steps as the indices are distinct
		for seen[k] != nil {
			k++
		}
		return nil, nil, fmt.Errorf("sweep merge: shard %d/%d is missing (given %d of %d shards)", k, first.Shards, len(shards), first.Shards)
	}
	us := make([]unitResult, total)
	for _, sf := range seen {
		lo := sf.FirstUnit
		for k, u := range sf.Results {
			at := lo + k
			c, m := at/nm, at%nm
			if u.Bandwidth != c/nr || u.Reconfig != c%nr || u.Matrix != m || len(u.Completions) != na {
				return nil, nil, fmt.Errorf("sweep merge: %s: result %d (bandwidth %d, α_r %d, matrix %d, %d completions) is not unit %d (bandwidth %d, α_r %d, matrix %d, %d algorithms)",
					sf.Path, k, u.Bandwidth, u.Reconfig, u.Matrix, len(u.Completions), at, c/nr, c%nr, m, na)
			}
			us[at] = u.unit()
		}
	}
	cfg := Config{Algorithms: mf.Algorithms, Reference: mf.Reference, Bandwidths: mf.Bandwidths, Reconfigs: mf.Reconfigs}
	if !slices.Contains(cfg.Algorithms, cfg.Reference) {
		return nil, nil, fmt.Errorf("sweep merge: %s: field reference: %q is not among the algorithms %v", first.Path, cfg.Reference, cfg.Algorithms)
	}
	res := buildAs(cfg, mf.Algorithms, mf.Reference, mf.Tenants, nm, us)
	merged := *mf
	merged.Inputs = slices.Clone(seen[0].Manifest.Inputs)
	merged.Shards = nil
	for k := range first.Shards {
		sf := seen[k]
		merged.Shards = append(merged.Shards, ShardSource{Shard: sf.Shard, Shards: sf.Shards, File: sf.Path,
			SHA256: sf.SHA256, Inputs: sf.Manifest.Inputs})
	}
	return res, &merged, nil
}

// fieldDiff names the top-level fields of two JSON objects that differ, with both values.
func fieldDiff(a, b []byte) string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return fmt.Sprintf("%s vs %s", a, b)
	}
	keys := make([]string, 0, len(ma)+len(mb))
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var diffs []string
	for _, k := range keys {
		if !bytes.Equal(ma[k], mb[k]) {
			diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", k, orNone(ma[k]), orNone(mb[k])))
		}
	}
	return strings.Join(diffs, "; ")
}

func orNone(v json.RawMessage) string {
	if v == nil {
		return "(none)"
	}
	return string(v)
}
