package sweep

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// tenantDemands are joint 16-port matrices: tenant 0-3 fixed, tenant 4-7 a different demand in
// each matrix.
func tenantDemands() []*schedules.Demand {
	a := skewed(4, 1)
	var ds []*schedules.Demand
	for seed := range uint64(3) {
		b := skewed(4, 10+seed)
		d := schedules.NewDemand(16)
		for i := range 4 {
			for j := range 4 {
				d.Bytes[i][j] = a.At(i, j)
				d.Bytes[4+i][4+j] = b.At(i, j)
			}
		}
		ds = append(ds, d)
	}
	return ds
}

// TestTenantSweep: the columns are every algorithm under every allocation; each unit's numbers
// are experiment.RunTenants's for the matrix's tenants; under strict tenant 0-3's completion is
// the same in every matrix (B varies, A does not); the tenant columns reach the CSV; and shards
// merge to the unsharded run, byte for byte.
func TestTenantSweep(t *testing.T) {
	ctx := context.Background()
	ds := tenantDemands()
	blocks := []schedules.Block{{Lo: 0, Size: 4}, {Lo: 4, Size: 4}}
	cfg := Config{Algorithms: []string{"tetris", "bvn"}, Bandwidths: []float64{100e9}, Reconfigs: []float64{10e-6},
		Tenants: blocks, Allocations: []schedules.Allocation{schedules.Shared, schedules.Strict}, Jobs: 2}
	res, err := Run(ctx, ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tetris@shared", "bvn@shared", "tetris@strict", "bvn@strict"}; !slices.Equal(res.Algorithms, want) || res.Reference != "tetris@shared" {
		t.Fatalf("columns %v (reference %s), want %v over tetris@shared", res.Algorithms, res.Reference, want)
	}
	cell := res.Cells[0][0]
	for k, al := range cfg.Allocations {
		var sumA float64
		var firstA float64
		for m, d := range ds {
			rs, err := experiment.RunTenants(ctx, 16, cfg.tenantsOf(d), al, cfg.cell(100e9, 10e-6))
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				ar := cell.Algorithms[k*2+i]
				if ar.Completions[m] != r.CompletionSeconds {
					t.Errorf("%s matrix %d: %g, RunTenants %g", ar.Algorithm, m, ar.Completions[m], r.CompletionSeconds)
				}
			}
			if m == 0 {
				firstA = rs[0].Tenants[0].CompletionSeconds
			}
			if al == schedules.Strict && rs[0].Tenants[0].CompletionSeconds != firstA {
				t.Errorf("strict: tenant 0-3 completes at %g in matrix %d, %g in matrix 0", rs[0].Tenants[0].CompletionSeconds, m, firstA)
			}
			sumA += rs[0].Tenants[0].CompletionSeconds
		}
		if got := cell.Algorithms[k*2].Tenants[0]; got != sumA {
			t.Errorf("%s: tenant 0-3's sum %g, want %g", cfg.Allocations[k], got, sumA)
		}
	}
	for _, ar := range cell.Algorithms {
		if len(ar.Tenants) != 2 || !ar.HasStateChanges || max(ar.Tenants[0], ar.Tenants[1]) > ar.Completion || cell.LowerBound <= 0 {
			t.Errorf("%s: %+v (lower bound %g)", ar.Algorithm, ar, cell.LowerBound)
		}
	}
	csv := string(csvOf(t, res))
	if head, _, _ := strings.Cut(csv, "\n"); !strings.HasSuffix(head, ",state_changes,state_changes_max,tenant_0-3_completion_sum_seconds,tenant_4-7_completion_sum_seconds") || !strings.Contains(head, "ratio_vs_tetris@shared") {
		t.Errorf("CSV header %q", head)
	}
	inputs := []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "ab"}}
	var shards []*ShardFile
	for k := range 2 {
		sf, err := RunShard(ctx, ds, cfg, Shard{k, 2}, "tool", inputs)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, roundTrip(t, filepath.Join(t.TempDir(), "s"), sf))
	}
	got, m, err := Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, res) || string(csvOf(t, got)) != csv {
		t.Error("merged shards differ from the unsharded run")
	}
	if !slices.Equal(m.Tenants, []string{"0-3", "4-7"}) || !slices.Equal(m.Allocations, []string{"shared", "strict"}) {
		t.Errorf("manifest tenants %v, allocations %v", m.Tenants, m.Allocations)
	}
	for _, bad := range []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Tenants = []schedules.Block{{Lo: 2, Size: 4}} }, "a block of 4 ports must start at a multiple of 4"},
		{func(c *Config) { c.Tenants = blocks[:1] }, "entry 4→5"},
		{func(c *Config) { c.Allocations = nil }, "without an allocation"},
		{func(c *Config) { c.Algorithms = append(c.Algorithms, "snb") }, "snb plans on the crossbar"},
		{func(c *Config) { c.WearWeights = []float64{0, 1} }, "one axis at a time"},
	} {
		c := cfg
		bad.mutate(&c)
		if _, err := Run(ctx, ds, c); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: want an error naming %q", err, bad.want)
		}
	}
}
