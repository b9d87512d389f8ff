package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// An interrupted sweep keeps what it finished. RunCheckpointed runs the grid in chunks of units,
// in unit order, and after each chunk hands the units done so far, [0, done), to save as a shard
// file (PartialName in the output directory): the same format sweep merge reads, covering a
// prefix of the grid. A resumed run checks that the partial file comes from the same grid,
// models, tool and inputs (by hash), then computes only the units after it. A unit's numbers do
// not depend on the chunk it ran in, and build sums in matrix order, so a resumed sweep's files
// equal an uninterrupted one's byte for byte.

// PartialName is the file in the output directory that holds an unfinished sweep's units.
const PartialName = "sweep-partial.json"

// checkpointChunks is about how many chunks a grid runs in: each finished chunk is saved, so
// an interruption loses at most a fiftieth of the grid, while each chunk still gives the
// workers hundreds of tasks in a paper-sized grid.
const checkpointChunks = 50

// NewPartial is the partial file of a sweep of cfg over demands that has done no unit yet.
func NewPartial(demands []*schedules.Demand, cfg Config, tool string, inputs []provenance.Input) (*ShardFile, error) {
	if err := cfg.check(demands); err != nil {
		return nil, err
	}
	skeleton := cfg.skeleton(len(demands))
	return &ShardFile{Version: ShardVersion, Shard: 0, Shards: 1, Units: cfg.units(len(demands)), FirstUnit: 0,
		DemandSHA256: DemandFingerprint(demands), Manifest: NewManifest(skeleton, cfg, tool, inputs),
		Results: []UnitFile{}}, nil
}

// CheckResume reports whether prior (a partial file read back) continues the sweep that fresh
// (NewPartial of this run) describes: same manifest (inputs compared by hash, not by path), same
// matrices, and its results the first units of the grid in order. The error names the field
// that differs.
func CheckResume(prior, fresh *ShardFile) error {
	want, err := fresh.Manifest.comparable()
	if err != nil {
		return err
	}
	if prior.Manifest == nil {
		return errors.New("field manifest is missing")
	}
	got, err := prior.Manifest.comparable()
	if err != nil {
		return err
	}
	switch {
	case !bytes.Equal(got, want):
		return fmt.Errorf("it comes from a different sweep: %s", fieldDiff(want, got))
	case prior.DemandSHA256 != fresh.DemandSHA256:
		return fmt.Errorf("it swept different matrices (field demand_sha256: %s, this run's %s)", prior.DemandSHA256, fresh.DemandSHA256)
	case prior.Units != fresh.Units || prior.FirstUnit != 0 || prior.Shards != 1 || len(prior.Results) > prior.Units:
		return fmt.Errorf("fields units/first_unit/shards: %d units from %d of %d shards, this grid has %d units",
			len(prior.Results), prior.FirstUnit, prior.Shards, fresh.Units)
	}
	nm, nr, na := fresh.Manifest.Matrices, len(fresh.Manifest.Reconfigs), len(fresh.Manifest.Algorithms)
	for k, u := range prior.Results {
		c, m := k/nm, k%nm
		if u.Bandwidth != c/nr || u.Reconfig != c%nr || u.Matrix != m || len(u.Completions) != na {
			return fmt.Errorf("results[%d] (bandwidth %d, α_r %d, matrix %d, %d completions) is not unit %d",
				k, u.Bandwidth, u.Reconfig, u.Matrix, len(u.Completions), k)
		}
	}
	return nil
}

// RunCheckpointed sweeps the grid as Run does, starting after the units part already holds
// (part is NewPartial's, or a partial file CheckResume accepted) and calling save with part
// after every chunk of units it finishes. When ctx ends or a unit fails, part holds every unit
// finished before (save has seen it) and the error is returned.
func RunCheckpointed(ctx context.Context, demands []*schedules.Demand, cfg Config, part *ShardFile, save func(*ShardFile) error) (*Result, error) {
	if err := cfg.check(demands); err != nil {
		return nil, err
	}
	nm, nr, na := len(demands), len(cfg.Reconfigs), len(cfg.Names())
	total := cfg.units(nm)
	if part.Units != total {
		return nil, fmt.Errorf("sweep: the partial result has %d units, the grid %d", part.Units, total)
	}
	if cfg.Plan.Plans == nil {
		cfg.Plan.Plans = new(schedules.PlanCache) // one cache for every chunk, as one Run has
	}
	chunk := max(1, (total+checkpointChunks-1)/checkpointChunks)
	progress := cfg.Progress
	for lo := len(part.Results); lo < total; lo += chunk {
		hi := min(total, lo+chunk)
		if progress != nil {
			base := lo * na
			cfg.Progress = func(done, _ int) { progress(base+done, total*na) }
			progress(base, total*na)
		}
		us, err := runUnits(ctx, demands, cfg, lo, hi)
		if err != nil {
			return nil, err
		}
		for k, u := range us {
			c, m := (lo+k)/nm, (lo+k)%nm
			part.Results = append(part.Results, u.file(c/nr, c%nr, m))
		}
		if err := save(part); err != nil {
			return nil, fmt.Errorf("sweep: keeping the finished units: %w", err)
		}
	}
	us := make([]unitResult, total)
	for k, u := range part.Results {
		us[k] = u.unit()
	}
	return build(cfg, nm, us), nil
}
