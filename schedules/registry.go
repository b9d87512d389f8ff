package schedules

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
)

// Options are the inputs every scheduler receives. Schedulers ignore options that do not apply
// to them.
type Options struct {
	// Bandwidth is the per-port link bandwidth in bytes per second (> 0).
	Bandwidth float64
	// Reconfig is the 2×2 switch reconfiguration delay α_r in seconds (≥ 0).
	Reconfig float64
	// Fabric is the fabric to plan for; empty means the scheduler's natural fabric.
	Fabric FabricKind

	// Tetris ablations (Tetris Figure 6).
	NoPartial        bool // execute each planning matching as a barrier round
	NaiveRouting     bool // route with plain looping (first orientation), not Algorithm 3
	NoDegreeCoverage bool // select by cost alone, without covering the max-degree endpoints

	// SunflowBySize orders Sunflow's demands by size, descending, instead of (src, dst).
	SunflowBySize bool

	// RNBMapping is how Sunflow's and BFF's plans get Beneš paths (package rnbmap): "" or
	// "earliest" (the default) routes each circuit in plan order on the path that can start first
	// against the schedule so far, as Tetris does; "looping" routes the live set at each planned
	// start with plain looping; "avoid-live" gives each new circuit a path free of the circuits
	// live at its start when one exists.
	RNBMapping string

	// WearWeight, when positive, makes Tetris weigh switch wear (Tetris §5): its cost estimates
	// charge every switch state change WearWeight mean circuit transmission times beyond α_r, so
	// that it prefers reusing switch states; planned times keep the true α_r. Zero is Tetris.
	// WearBalance scales each switch's charge by its changes so far over the mean, so that
	// the most-changed switches are spared. Other schedulers ignore both.
	WearWeight  float64
	WearBalance bool

	// Plans, when set, lets schedulers reuse the demand-only part of their plans across calls
	// (see PlanCache); schedules are the same without it.
	Plans *PlanCache
}

// Check rejects options no scheduler can use.
func (o Options) Check() error {
	if !(o.Bandwidth > 0) || math.IsInf(o.Bandwidth, 0) {
		return fmt.Errorf("bandwidth must be positive and finite, got %g bytes/s", o.Bandwidth)
	}
	if !(o.Reconfig >= 0) {
		return fmt.Errorf("reconfiguration delay must be non-negative, got %g s", o.Reconfig)
	}
	if err := CheckSeconds("reconfiguration delay", o.Reconfig); err != nil {
		return err
	}
	if o.Fabric != "" && o.Fabric != Benes && o.Fabric != Crossbar {
		return fmt.Errorf("fabric %q is not \"benes\" or \"crossbar\"", o.Fabric)
	}
	if !(o.WearWeight >= 0) || math.IsInf(o.WearWeight, 0) {
		return fmt.Errorf("wear weight must be non-negative and finite, got %g", o.WearWeight)
	}
	switch o.RNBMapping {
	case "", "earliest", "looping", "avoid-live":
	default:
		return fmt.Errorf("RNB mapping %q is not \"earliest\", \"looping\" or \"avoid-live\"", o.RNBMapping)
	}
	return nil
}

// Scheduler turns a demand into a schedule. Implementations must return schedules that pass
// Verify for the same demand.
type Scheduler interface {
	Schedule(ctx context.Context, d *Demand, o Options) (*Schedule, error)
}

// SchedulerFunc adapts a function to Scheduler.
type SchedulerFunc func(ctx context.Context, d *Demand, o Options) (*Schedule, error)

// Schedule calls f.
func (f SchedulerFunc) Schedule(ctx context.Context, d *Demand, o Options) (*Schedule, error) {
	return f(ctx, d, o)
}

type registered struct {
	summary string
	s       Scheduler
}

var (
	registryMu sync.RWMutex
	registry   = map[string]registered{}
)

// Register makes a scheduler available by name. It panics on a duplicate name, which is a
// programming error found at init time.
func Register(name, summary string, s Scheduler) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("schedules: Register called twice for " + name)
	}
	registry[name] = registered{summary, checked{s}}
}

// checked is a registered scheduler behind the input boundary: every caller that finds a
// scheduler by name gets the options checked and the demand held to the limits (CheckHorizon)
// before planning, so that no input can drive a scheduler past the range its arithmetic keeps
// exact. Errors wrap ErrLimit where a limit is the cause.
type checked struct{ s Scheduler }

func (c checked) Schedule(ctx context.Context, d *Demand, o Options) (*Schedule, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := o.CheckHorizon(d); err != nil {
		return nil, err
	}
	return c.s.Schedule(ctx, d, o)
}

// Lookup returns the scheduler registered under name.
func Lookup(name string) (Scheduler, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	r, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown algorithm %q (known: %v)", name, namesLocked())
	}
	return r.s, nil
}

// Names lists the registered schedulers in a stable order: tetris first, then the rest sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	var ns []string
	for n := range registry {
		ns = append(ns, n)
	}
	sort.Slice(ns, func(i, j int) bool {
		if (ns[i] == "tetris") != (ns[j] == "tetris") {
			return ns[i] == "tetris"
		}
		return ns[i] < ns[j]
	})
	return ns
}

// Summary is the one-line description a scheduler registered with.
func Summary(name string) string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registry[name].summary
}
