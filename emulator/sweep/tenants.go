package sweep

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// A multi-tenant sweep (Config.Tenants) runs experiment.RunTenants per unit and allocation: the
// tenants' demands are the blocks of each joint matrix, every algorithm plans them under the
// allocation (strict: each tenant alone in its sub-Beneš), and a unit's columns are the
// algorithms under each allocation, with each tenant's completion beside the fabric's.

// checkTenants validates a multi-tenant sweep (nothing to check without tenants).
func (cfg *Config) checkTenants(demands []*schedules.Demand) error {
	if len(cfg.Tenants) == 0 {
		if len(cfg.Allocations) > 0 {
			return fmt.Errorf("sweep: allocations %v without tenants", cfg.Allocations)
		}
		return nil
	}
	switch {
	case len(cfg.Allocations) == 0:
		return fmt.Errorf("sweep: tenants %v without an allocation", cfg.Tenants)
	case len(cfg.WearWeights) > 1:
		return fmt.Errorf("sweep: tenants and a wear-weight axis: sweep one axis at a time")
	case cfg.Fabric == schedules.Crossbar:
		return fmt.Errorf("sweep: tenant allocations are of the Beneš fabric, not the crossbar")
	case cfg.MaxMemory > 0:
		return fmt.Errorf("sweep: a memory limit is not applied to tenants' runs; leave it out")
	}
	for i, a := range cfg.Allocations {
		if _, err := schedules.ParseAllocation(string(a)); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if slices.Index(cfg.Allocations, a) != i {
			return fmt.Errorf("sweep: allocation %s is listed twice", a)
		}
	}
	if slices.Contains(cfg.Algorithms, "snb") {
		return fmt.Errorf("sweep: snb plans on the crossbar, which has no allocations: leave it out with tenants")
	}
	for m, d := range demands {
		if d.CountDiagonal {
			return fmt.Errorf("sweep: demand matrix %d counts local (i→i) traffic, which tenants' plans leave out", m)
		}
		f, err := benes.New(d.N())
		if err != nil {
			return fmt.Errorf("sweep: demand matrix %d: tenants share a Beneš fabric: %w", m, err)
		}
		for _, a := range cfg.Allocations {
			if err := schedules.CheckTenants(f, cfg.Tenants, a); err != nil {
				return fmt.Errorf("sweep: demand matrix %d (%d ports): %w", m, d.N(), err)
			}
		}
		for i := range d.N() {
			for j := range d.N() {
				if d.At(i, j) != 0 && !slices.ContainsFunc(cfg.Tenants, func(b schedules.Block) bool { return b.Has(i) && b.Has(j) }) {
					return fmt.Errorf("sweep: demand matrix %d: entry %d→%d (%d bytes) joins no tenant's ports to its own", m, i, j, d.At(i, j))
				}
			}
		}
	}
	return nil
}

// tenantsOf is the tenants of joint demand d: each block's demand.
func (cfg *Config) tenantsOf(d *schedules.Demand) []experiment.Tenant {
	ts := make([]experiment.Tenant, len(cfg.Tenants))
	for k, b := range cfg.Tenants {
		t := schedules.NewDemand(b.Size)
		for i := range b.Size {
			for j := range b.Size {
				t.Bytes[i][j] = d.At(b.Lo+i, b.Lo+j)
			}
		}
		ts[k] = experiment.Tenant{Ports: b, Demand: t}
	}
	return ts
}

// runTenantUnits is runUnits for a multi-tenant sweep: one task per unit and allocation on
// cfg.Jobs workers, results stored by index.
func runTenantUnits(ctx context.Context, demands []*schedules.Demand, cfg Config, lo, hi int) ([]unitResult, error) {
	nm, nr, na, nal := len(demands), len(cfg.Reconfigs), len(cfg.Algorithms), len(cfg.Allocations)
	out := make([]unitResult, hi-lo)
	runs := make([][]experiment.TenantRun, (hi-lo)*nal)
	errs := make([]error, len(runs))
	bounds := make([]float64, hi-lo)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := cfg.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	next, done := 0, 0
	var wg sync.WaitGroup
	for range min(jobs, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				t := next
				next++
				mu.Unlock()
				if t >= len(runs) || ctx.Err() != nil {
					return
				}
				u, al := lo+t/nal, cfg.Allocations[t%nal]
				c, m := u/nm, u%nm
				ec := cfg.cell(cfg.Bandwidths[c/nr], cfg.Reconfigs[c%nr])
				rs, err := experiment.RunTenants(ctx, demands[m].N(), cfg.tenantsOf(demands[m]), al, ec)
				if err == nil && t%nal == 0 {
					var b schedules.Bounds
					b, err = emulator.LowerBounds(demands[m], ec.Exec)
					bounds[u-lo] = b.Max()
				}
				if err != nil {
					if ctx.Err() != nil {
						return // another task failed first, or the caller stopped the sweep: reported below
					}
					errs[t] = fmt.Errorf("sweep: bandwidth %s, α_r %s, matrix %d, allocation %s: %w",
						units.FormatBandwidth(cfg.Bandwidths[c/nr]), units.FormatSeconds(cfg.Reconfigs[c%nr]), m, al, err)
					cancel()
					return
				}
				runs[t] = rs
				mu.Lock()
				done++
				if cfg.Progress != nil {
					cfg.Progress(done*na, len(runs)*na)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	for k := range out {
		out[k] = tenantUnit(bounds[k], runs[k*nal:(k+1)*nal])
	}
	return out, nil
}

// tenantUnit is a unit from its runs, allocation by allocation (each every algorithm's).
func tenantUnit(bound float64, byAlloc [][]experiment.TenantRun) unitResult {
	ur := unitResult{lowerBound: bound}
	for _, rs := range byAlloc {
		for _, r := range rs {
			ur.completions = append(ur.completions, r.CompletionSeconds)
			ur.changes = append(ur.changes, r.StateChanges)
			per := r.StateChangesPerSwitch
			if per == nil {
				per = []emulator.SwitchCount{}
			}
			ur.perSwitch = append(ur.perSwitch, per)
			ts := make([]float64, len(r.Tenants))
			for i, tc := range r.Tenants {
				ts[i] = tc.CompletionSeconds
			}
			ur.tenants = append(ur.tenants, ts)
		}
	}
	return ur
}

// sumTenants fills algorithm a's tenants' completions summed over the units of its cell, in a
// sweep of nt tenants whose units all hold them.
func sumTenants(ar *AlgoResult, cu []unitResult, a, nt int) {
	if nt == 0 {
		return
	}
	ar.Tenants = make([]float64, nt)
	for _, u := range cu {
		for i := range nt {
			ar.Tenants[i] += u.tenants[a][i]
		}
	}
}
