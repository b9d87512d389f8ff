package experiment

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// tenantAlgorithms are the Beneš schedulers (snb plans on the crossbar, which has no
// allocations).
func tenantAlgorithms() []string {
	var out []string
	for _, a := range schedules.Names() {
		if a != "snb" && !strings.HasPrefix(a, "experimenttest") {
			out = append(out, a)
		}
	}
	return out
}

func tenantConfig(algos []string) Config {
	return Config{Algorithms: algos, Options: schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6},
		Exec: emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}}
}

// bVariants are tenant B's demands: idle, a base scaled, and random.
func bVariants(size int) []*schedules.Demand {
	base := skewed(size, 9)
	vs := []*schedules.Demand{nil}
	for _, k := range []int64{1, 2, 4} {
		d := schedules.NewDemand(size)
		for i := range size {
			for j := range size {
				d.Bytes[i][j] = base.Bytes[i][j] * k
			}
		}
		vs = append(vs, d)
	}
	r := rand.New(rand.NewPCG(3, 3))
	d := schedules.NewDemand(size)
	for i := range size {
		for j := range size {
			if r.IntN(3) > 0 {
				d.Bytes[i][j] = r.Int64N(1 << 22)
			}
		}
	}
	return append(vs, d)
}

// TestStrictIsolationExact: under the strict allocation tenant A's completion is the same
// float, bit for bit, whatever B's demand, for every scheduler; and for partial-mode schedules
// the tenants' schedules executed together (one fabric, one walk) give A that same completion,
// so the isolation is the fabric's, not an artefact of running tenants apart.
func TestStrictIsolationExact(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{8, 16} {
		a := Tenant{Ports: schedules.Block{Lo: 0, Size: 4}, Demand: skewed(4, 1)}
		for _, algo := range tenantAlgorithms() {
			var want float64
			for k, bd := range bVariants(4) {
				b := Tenant{Ports: schedules.Block{Lo: 4, Size: 4}, Demand: bd}
				runs, err := RunTenants(ctx, n, []Tenant{a, b}, schedules.Strict, tenantConfig([]string{algo}))
				if err != nil {
					t.Fatalf("n %d %s variant %d: %v", n, algo, k, err)
				}
				got := runs[0].Tenants[0].CompletionSeconds
				if k == 0 {
					want = got
				} else if got != want {
					t.Fatalf("n %d %s: A completes at %v with B variant %d, %v with B idle", n, algo, got, k, want)
				}
				if runs[0].Tenants[0].PathsPerPair != 2 || runs[0].Tenants[0].MaxConcurrent != 4 {
					t.Fatalf("tenant A: %+v, want 2 paths per pair and 4 concurrent circuits", runs[0].Tenants[0])
				}
				// Executed together.
				f, _ := benes.New(n)
				sch, _ := schedules.Lookup(algo)
				cfg := tenantConfig([]string{algo})
				sa, err := planTenant(ctx, f, sch, a, &cfg)
				if err != nil {
					t.Fatal(err)
				}
				if sa.Mode != schedules.Partial || bd == nil {
					continue
				}
				sb, err := planTenant(ctx, f, sch, b, &cfg)
				if err != nil {
					t.Fatal(err)
				}
				m := mergeTenants([]*schedules.Schedule{sa, sb}, n)
				comp, _, err := runChecked(ctx, m, nil, &cfg, []schedules.Block{a.Ports, b.Ports})
				if err != nil {
					t.Fatal(err)
				}
				if comp[a.Ports] != want {
					t.Fatalf("n %d %s variant %d: run together A completes at %v, alone at %v", n, algo, k, comp[a.Ports], want)
				}
			}
		}
	}
}

// TestTenantAllocationsVerify: every scheduler under every allocation plans schedules that pass
// the verifier and the tenant check, and reports every tenant.
func TestTenantAllocationsVerify(t *testing.T) {
	ctx := context.Background()
	ts := []Tenant{{Ports: schedules.Block{Lo: 0, Size: 4}, Demand: skewed(4, 1)}, {Ports: schedules.Block{Lo: 4, Size: 4}, Demand: skewed(4, 2)}}
	for _, alloc := range schedules.Allocations {
		runs, err := RunTenants(ctx, 16, ts, alloc, tenantConfig(tenantAlgorithms()))
		if err != nil {
			t.Fatalf("%s: %v", alloc, err)
		}
		for _, r := range runs {
			if len(r.Tenants) != 2 || r.Tenants[0].Ports != "0-3" || r.Tenants[1].Ports != "4-7" ||
				r.CompletionSeconds != max(r.Tenants[0].CompletionSeconds, r.Tenants[1].CompletionSeconds) || r.Tenants[0].CompletionSeconds <= 0 {
				t.Fatalf("%s %s: %+v", alloc, r.Algorithm, r)
			}
		}
	}
}

// TestVerifyTenantsRejectsPlanted: a strict schedule with one circuit moved onto a path that
// turns where its allocation goes straight, or that crosses into another tenant's ports, fails
// the tenant check with a message naming the circuit's tenant and the switch; the strict
// schedule itself passes.
func TestVerifyTenantsRejectsPlanted(t *testing.T) {
	ctx := context.Background()
	n := 16
	f, _ := benes.New(n)
	sch, _ := schedules.Lookup("tetris")
	cfg := tenantConfig([]string{"tetris"})
	a := Tenant{Ports: schedules.Block{Lo: 0, Size: 4}, Demand: skewed(4, 1)}
	b := Tenant{Ports: schedules.Block{Lo: 4, Size: 4}, Demand: skewed(4, 2)}
	sa, _ := planTenant(ctx, f, sch, a, &cfg)
	sb, _ := planTenant(ctx, f, sch, b, &cfg)
	blocks := []schedules.Block{a.Ports, b.Ports}
	m := mergeTenants([]*schedules.Schedule{sa, sb}, n)
	if vs := schedules.VerifyTenants(m, blocks, schedules.Strict); len(vs) > 0 {
		t.Fatalf("strict schedule fails: %v", vs)
	}
	// Plant: circuit 0 (tenant A's) takes the other child at level 2, which its block (j = 2)
	// must pass straight.
	c := &m.Circuits[0]
	_, _, choices, _, _ := c.Path.Compact()
	c.Path = f.NewPath(c.Src, c.Dst, choices^1<<2)
	vs := schedules.VerifyTenants(m, blocks, schedules.Strict)
	if len(vs) == 0 || vs[0].Circuit != 0 || !strings.Contains(vs[0].Message, "tenant 0-3") || !strings.Contains(vs[0].Message, "outside its strict allocation") {
		t.Fatalf("planted turn: %v", vs)
	}
	if vs := schedules.VerifyTenants(m, blocks, schedules.Centre); len(vs) > 0 {
		t.Fatalf("the turn is in the centre, which the centre allocation shares: %v", vs)
	}
	// Plant: a circuit from A's port to B's.
	c.Dst = 5
	c.Path = f.NewPath(c.Src, c.Dst, 0)
	vs = schedules.VerifyTenants(m, blocks, schedules.Shared)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "joins no tenant's ports") {
		t.Fatalf("planted crossing: %v", vs)
	}
}

func TestRunTenantsRefusesUnaligned(t *testing.T) {
	ts := []Tenant{{Ports: schedules.Block{Lo: 0, Size: 3}, Demand: skewed(3, 1)}, {Ports: schedules.Block{Lo: 3, Size: 5}, Demand: skewed(5, 2)}}
	_, err := RunTenants(context.Background(), 8, ts, schedules.Strict, tenantConfig([]string{"tetris"}))
	if err == nil || !strings.Contains(err.Error(), "not a power of two") {
		t.Fatalf("strict with 0-2 and 3-7: %v", err)
	}
	if _, err := RunTenants(context.Background(), 8, ts, schedules.Shared, tenantConfig([]string{"tetris"})); err != nil {
		t.Fatalf("shared with 0-2 and 3-7: %v", err)
	}
}

// TestInterferenceStrictFlat: over B's variants, strict gives A one completion (min = max), and
// the rows carry every variant's run.
func TestInterferenceStrictFlat(t *testing.T) {
	spec := InterferenceSpec{N: 16, A: Tenant{Ports: schedules.Block{Lo: 0, Size: 4}, Demand: skewed(4, 1)},
		B: schedules.Block{Lo: 4, Size: 4}, Variants: ScaledVariants(skewed(4, 5), []float64{0.5, 1, 2, 4}, 1),
		Allocations: schedules.Allocations, Config: tenantConfig([]string{"tetris", "bvn"})}
	rows, err := Interference(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 3 allocations × 2 algorithms", len(rows))
	}
	for _, r := range rows {
		if len(r.Runs) != 6 || r.AIdle <= 0 {
			t.Fatalf("%s %s: %d runs, A with B idle %g", r.Allocation, r.Algorithm, len(r.Runs), r.AIdle)
		}
		if r.Allocation == schedules.Strict && (r.A.Min != r.A.Max || r.A.Min != r.AIdle) {
			t.Errorf("strict %s: A spreads %+v (B idle: %g)", r.Algorithm, r.A, r.AIdle)
		}
		if !(r.A.Min <= r.A.Median && r.A.Median <= r.A.Max && r.Fabric.Max >= r.A.Max) {
			t.Errorf("%s %s: spreads out of order: A %+v fabric %+v", r.Allocation, r.Algorithm, r.A, r.Fabric)
		}
	}
	var buf strings.Builder
	if err := WriteInterferenceTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + buf.String())
}
