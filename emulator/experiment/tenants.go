package experiment

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Tenant is one tenant of a shared fabric: its ports and its demand over them (Demand is
// Ports.Size × Ports.Size, row i being port Ports.Lo+i); a nil Demand is an idle tenant.
type Tenant struct {
	Ports  schedules.Block
	Demand *schedules.Demand
}

// TenantRun is one algorithm serving every tenant under one allocation.
type TenantRun struct {
	Algorithm  string               `json:"algorithm"`
	Allocation schedules.Allocation `json:"allocation"`
	// CompletionSeconds is the fabric's: when the last circuit of any tenant ended.
	CompletionSeconds float64            `json:"completion_seconds"`
	Tenants           []TenantCompletion `json:"tenants"`
	// State changes over every tenant, as Record's.
	StateChanges          int                    `json:"state_changes"`
	StateChangesMax       int                    `json:"state_changes_max"`
	StateChangesPerSwitch []emulator.SwitchCount `json:"state_changes_per_switch"`
}

// TenantCompletion is one tenant's share of a run: its ports ("0-3"), when its last circuit
// ended, and what the allocation leaves it: paths per pair of its ports and the most circuits it
// can hold at once (every permutation of its ports, on a rearrangeably non-blocking fabric).
type TenantCompletion struct {
	Ports             string  `json:"ports"`
	CompletionSeconds float64 `json:"completion_seconds"`
	PathsPerPair      int     `json:"paths_per_pair"`
	MaxConcurrent     int     `json:"max_concurrent_circuits"`
}

// RunTenants plans and executes the tenants on an n-port Beneš fabric under alloc with every
// algorithm of cfg (cfg.Options and cfg.Exec as Run's; the fabric must be Beneš):
//
//   - Shared: one joint plan of the tenants' demands on the whole fabric, executed as one.
//   - Strict: each tenant planned alone on a Beneš of its own size and embedded in its
//     sub-Beneš (benes.Fabric.Embed), executed alone: what the others do cannot reach it. The
//     tenants' schedules together pass the strict check of schedules.VerifyTenants.
//   - Centre: each tenant planned alone on the whole fabric (its circuits reach the centre's
//     shared switches), the plans merged in order of planned start (barrier rounds alternate
//     between tenants) and executed as one, so that changes of a shared switch are serialised.
//
// Every schedule passes schedules.Verify and VerifyTenants, every timeline VerifyTimeline.
func RunTenants(ctx context.Context, n int, tenants []Tenant, alloc schedules.Allocation, cfg Config) ([]TenantRun, error) {
	if cfg.Options.Fabric == schedules.Crossbar {
		return nil, fmt.Errorf("experiment: tenant allocations are of the Beneš fabric, not the crossbar")
	}
	f, err := benes.New(n)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	blocks := make([]schedules.Block, len(tenants))
	for i, t := range tenants {
		blocks[i] = t.Ports
		if t.Demand != nil && t.Demand.N() != t.Ports.Size {
			return nil, fmt.Errorf("experiment: tenant %s has a %d-port demand for %d ports", t.Ports, t.Demand.N(), t.Ports.Size)
		}
	}
	if err := schedules.CheckTenants(f, blocks, alloc); err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	var runs []TenantRun
	for _, name := range cfg.Algorithms {
		sch, err := schedules.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		r, err := runTenants(ctx, f, sch, tenants, blocks, alloc, &cfg)
		if err != nil {
			return nil, fmt.Errorf("%s under the %s allocation: %w", name, alloc, err)
		}
		r.Algorithm, r.Allocation = name, alloc
		for i, b := range blocks {
			r.Tenants[i].Ports = b.String()
			r.Tenants[i].MaxConcurrent = b.Size
			r.Tenants[i].PathsPerPair = n / 2
			if alloc == schedules.Strict {
				r.Tenants[i].PathsPerPair = max(b.Size/2, 1)
			}
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// PlanTenants plans the tenants on an n-port Beneš fabric under alloc with the registered
// scheduler algo, as RunTenants plans them, and returns the one schedule that serves them all
// (under Strict the tenants' embedded plans merged, as mergeTenants orders them) with the joint
// demand it delivers. The schedule passes schedules.Verify for that demand and
// schedules.VerifyTenants for the tenants under alloc; it is what 'schedule --tenants' writes
// and 'verify --tenants' checks.
func PlanTenants(ctx context.Context, n int, tenants []Tenant, alloc schedules.Allocation, algo string, o schedules.Options) (*schedules.Schedule, *schedules.Demand, error) {
	if o.Fabric == schedules.Crossbar {
		return nil, nil, fmt.Errorf("experiment: tenant allocations are of the Beneš fabric, not the crossbar")
	}
	f, err := benes.New(n)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment: %w", err)
	}
	blocks := make([]schedules.Block, len(tenants))
	for i, t := range tenants {
		blocks[i] = t.Ports
		if t.Demand != nil && t.Demand.N() != t.Ports.Size {
			return nil, nil, fmt.Errorf("experiment: tenant %s has a %d-port demand for %d ports", t.Ports, t.Demand.N(), t.Ports.Size)
		}
	}
	if err := schedules.CheckTenants(f, blocks, alloc); err != nil {
		return nil, nil, fmt.Errorf("experiment: %w", err)
	}
	sch, err := schedules.Lookup(algo)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment: %w", err)
	}
	cfg := Config{Options: o}
	var s *schedules.Schedule
	var d *schedules.Demand
	if alloc == schedules.Strict {
		var parts []*schedules.Schedule
		for _, t := range tenants {
			p, err := planTenant(ctx, f, sch, t, &cfg)
			if err != nil {
				return nil, nil, fmt.Errorf("%s under the %s allocation: %w", algo, alloc, err)
			}
			if p != nil {
				parts = append(parts, p)
			}
		}
		s, d = mergeTenants(parts, n), jointDemand(n, tenants)
		if vs := schedules.Verify(s, d); len(vs) > 0 {
			return nil, nil, &Invalid{Internal: true, Violations: vs}
		}
	} else if s, d, err = planJoint(ctx, f, sch, tenants, alloc, &cfg); err != nil {
		return nil, nil, fmt.Errorf("%s under the %s allocation: %w", algo, alloc, err)
	}
	if vs := schedules.VerifyTenants(s, blocks, alloc); len(vs) > 0 {
		return nil, nil, &Invalid{Internal: true, Violations: vs}
	}
	return s, d, nil
}

// runTenants is RunTenants for one scheduler.
func runTenants(ctx context.Context, f *benes.Fabric, sch schedules.Scheduler, tenants []Tenant, blocks []schedules.Block, alloc schedules.Allocation, cfg *Config) (TenantRun, error) {
	r := TenantRun{Tenants: make([]TenantCompletion, len(tenants))}
	n := f.Ports()
	if alloc == schedules.Strict {
		var parts []*schedules.Schedule
		var counts []emulator.SwitchCount
		for i, t := range tenants {
			s, err := planTenant(ctx, f, sch, t, cfg)
			if err != nil || s == nil {
				return r, err
			}
			d := embedDemand(n, t)
			comp, per, err := runChecked(ctx, s, d, cfg, blocks)
			if err != nil {
				return r, fmt.Errorf("tenant %s: %w", t.Ports, err)
			}
			r.Tenants[i].CompletionSeconds = comp[t.Ports]
			r.CompletionSeconds = max(r.CompletionSeconds, comp[t.Ports])
			counts = append(counts, per...)
			parts = append(parts, s)
		}
		if vs := schedules.VerifyTenants(mergeTenants(parts, n), blocks, alloc); len(vs) > 0 {
			return r, &Invalid{Internal: true, Violations: vs}
		}
		r.StateChangesPerSwitch = sumCounts(counts)
	} else {
		s, d, err := planJoint(ctx, f, sch, tenants, alloc, cfg)
		if err != nil {
			return r, err
		}
		if vs := schedules.VerifyTenants(s, blocks, alloc); len(vs) > 0 {
			return r, &Invalid{Internal: true, Violations: vs}
		}
		comp, per, err := runChecked(ctx, s, d, cfg, blocks)
		if err != nil {
			return r, err
		}
		for i, t := range tenants {
			r.Tenants[i].CompletionSeconds = comp[t.Ports]
			r.CompletionSeconds = max(r.CompletionSeconds, comp[t.Ports])
		}
		r.StateChangesPerSwitch = per
	}
	for _, c := range r.StateChangesPerSwitch {
		r.StateChanges += c.Count
		r.StateChangesMax = max(r.StateChangesMax, c.Count)
	}
	return r, nil
}

// planTenant plans tenant t alone on a Beneš of its own size and embeds the plan in its
// sub-Beneš of f (nil for an idle tenant).
func planTenant(ctx context.Context, f *benes.Fabric, sch schedules.Scheduler, t Tenant, cfg *Config) (*schedules.Schedule, error) {
	if t.Demand == nil || t.Demand.Total() == 0 {
		return nil, nil
	}
	s, err := sch.Schedule(ctx, t.Demand, cfg.Options)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: scheduling: %w", t.Ports, err)
	}
	if vs := schedules.Verify(s, t.Demand); len(vs) > 0 {
		return nil, fmt.Errorf("tenant %s: %w", t.Ports, &Invalid{Internal: true, Violations: vs})
	}
	if s.N != t.Ports.Size || s.Fabric != schedules.Benes {
		return nil, fmt.Errorf("tenant %s: the scheduler planned for %d ports on %s, not the tenant's %d-port Beneš", t.Ports, s.N, s.Fabric, t.Ports.Size)
	}
	e := *s
	e.N, e.Ports = f.Ports(), f.Ports()
	e.Circuits = make([]schedules.Circuit, len(s.Circuits))
	for i, c := range s.Circuits {
		c.Path = f.Embed(t.Ports.Lo, t.Ports.Size, c.Src, c.Dst, c.Path)
		c.Src += t.Ports.Lo
		c.Dst += t.Ports.Lo
		e.Circuits[i] = c
	}
	return &e, nil
}

// planJoint plans the Shared (one plan of the joint demand) or Centre (one plan per tenant on
// the whole fabric, merged) schedule and returns it with the joint demand.
func planJoint(ctx context.Context, f *benes.Fabric, sch schedules.Scheduler, tenants []Tenant, alloc schedules.Allocation, cfg *Config) (*schedules.Schedule, *schedules.Demand, error) {
	n := f.Ports()
	joint := jointDemand(n, tenants)
	var s *schedules.Schedule
	if alloc == schedules.Shared {
		var err error
		if s, err = sch.Schedule(ctx, joint, cfg.Options); err != nil {
			return nil, nil, fmt.Errorf("scheduling: %w", err)
		}
	} else {
		var parts []*schedules.Schedule
		for _, t := range tenants {
			d := embedDemand(n, t)
			if d.Total() == 0 {
				continue
			}
			p, err := sch.Schedule(ctx, d, cfg.Options)
			if err != nil {
				return nil, nil, fmt.Errorf("tenant %s: scheduling: %w", t.Ports, err)
			}
			parts = append(parts, p)
		}
		s = mergeTenants(parts, n)
	}
	if vs := schedules.Verify(s, joint); len(vs) > 0 {
		return nil, nil, &Invalid{Internal: true, Violations: vs}
	}
	return s, joint, nil
}

// jointDemand is every tenant's demand on its ports of the n-port fabric.
func jointDemand(n int, tenants []Tenant) *schedules.Demand {
	joint := schedules.NewDemand(n)
	for _, t := range tenants {
		if t.Demand == nil {
			continue
		}
		for i := range t.Ports.Size {
			for j := range t.Ports.Size {
				joint.Bytes[t.Ports.Lo+i][t.Ports.Lo+j] = t.Demand.At(i, j)
			}
		}
	}
	return joint
}

// embedDemand is tenant t's demand on the n ports of the fabric.
func embedDemand(n int, t Tenant) *schedules.Demand {
	d := schedules.NewDemand(n)
	if t.Demand != nil {
		for i := range t.Ports.Size {
			for j := range t.Ports.Size {
				d.Bytes[t.Ports.Lo+i][t.Ports.Lo+j] = t.Demand.At(i, j)
			}
		}
	}
	return d
}

// mergeTenants joins the tenants' schedules (all on the n-port fabric, in one mode) into one: in
// partial mode circuits in order of planned start (a circuit without one after those with one),
// ties to the earlier tenant; in barrier mode round g of tenant k becomes round g·K + k of K
// tenants, so that the tenants' rounds alternate. An empty list gives an empty schedule.
func mergeTenants(parts []*schedules.Schedule, n int) *schedules.Schedule {
	m := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "tenants", N: n, Ports: n,
		Fabric: schedules.Benes, Mode: schedules.Partial, Circuits: []schedules.Circuit{}}
	if len(parts) == 0 {
		return m
	}
	m.Algorithm, m.Mode, m.Params = parts[0].Algorithm, parts[0].Mode, parts[0].Params
	type item struct {
		c      schedules.Circuit
		tenant int
		at     float64
	}
	var items []item
	k := len(parts)
	for t, p := range parts {
		for _, c := range p.Circuits {
			at := math.Inf(1)
			if c.PlannedStart != nil {
				at = *c.PlannedStart
			}
			if m.Mode == schedules.Barrier {
				c.Group = c.Group*k + t
				at = float64(c.Group)
			}
			items = append(items, item{c, t, at})
		}
		for _, r := range p.Rounds {
			if m.Mode == schedules.Barrier {
				r.Group = r.Group*k + t
			}
			m.Rounds = append(m.Rounds, r)
		}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.tenant - b.tenant
	})
	for _, it := range items {
		m.Circuits = append(m.Circuits, it.c)
	}
	slices.SortStableFunc(m.Rounds, func(a, b schedules.Round) int { return a.Group - b.Group })
	return m
}

// runChecked executes s (nil: nothing to run) on its fabric and checks the timeline; it returns
// each tenant block's completion (the latest end of a circuit from its ports) and the per-switch
// changes.
func runChecked(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg *Config, blocks []schedules.Block) (map[schedules.Block]float64, []emulator.SwitchCount, error) {
	comp := map[schedules.Block]float64{}
	if s == nil || len(s.Circuits) == 0 {
		return comp, nil, nil
	}
	exec := cfg.Exec
	exec.PathsChecked = true // verified by the caller
	per, err := emulator.SwitchChanges(s, true)
	if err != nil {
		return nil, nil, err
	}
	_, tl, err := emulator.Run(ctx, s, d, exec)
	if err != nil {
		return nil, nil, fmt.Errorf("emulating: %w", err)
	}
	if !cfg.SkipVerify {
		if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
			return nil, nil, &Invalid{Internal: true, Violations: vs}
		}
	}
	for _, b := range blocks {
		for i, c := range s.Circuits {
			if b.Has(c.Src) {
				comp[b] = max(comp[b], tl.Circuits[i].End)
			}
		}
	}
	return comp, per, nil
}

// sumCounts adds per-switch counts of several runs, by stage then index.
func sumCounts(cs []emulator.SwitchCount) []emulator.SwitchCount {
	sum := map[[2]int]int{}
	for _, c := range cs {
		sum[[2]int{c.Stage, c.Index}] += c.Count
	}
	out := []emulator.SwitchCount{}
	for k, c := range sum {
		out = append(out, emulator.SwitchCount{Stage: k[0], Index: k[1], Count: c})
	}
	sortCounts(out)
	return out
}
