package schedules

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Tenants share one fabric, each on its own ports with its own demand (Tetris §5, multi-tenant
// isolation). An Allocation says which internal switches each tenant's circuits may use:
//
//   - Shared: any. The tenants' circuits meet on the switches of the levels their blocks have in
//     common, and one tenant's reconfigurations there delay the other's circuits.
//   - Strict: the sub-Beneš of the recursion (benes.Fabric.CheckBlock): the tenant's own switches,
//     and straight passage in Bar on its own lane through the switches it shares. No switch a
//     tenant may set is used by another, and no shared switch ever changes state.
//   - Centre: each tenant's own switches as under Strict at the levels its block spans, and the
//     fabric's centre (the levels below, which its block shares with the others) in any state:
//     changes there are serialised between the tenants by the executor (a change waits for every
//     earlier user, of any tenant).
type Allocation string

const (
	Shared Allocation = "shared"
	Strict Allocation = "strict"
	Centre Allocation = "centre"
)

// Allocations are the allocations in the order the interference experiment runs them.
var Allocations = []Allocation{Shared, Centre, Strict}

// ParseAllocation checks an allocation's name.
func ParseAllocation(s string) (Allocation, error) {
	for _, a := range Allocations {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("allocation %q is not shared, centre or strict", s)
}

// TenantViolation is a circuit outside its tenant's allocation.
const TenantViolation ViolationKind = "tenant"

// Block is one tenant's ports, [Lo, Lo+Size).
type Block struct{ Lo, Size int }

// String writes the ports as "0-3".
func (b Block) String() string { return benes.PortRange(b.Lo, b.Size) }

// Has says whether port p is the tenant's.
func (b Block) Has(p int) bool { return p >= b.Lo && p < b.Lo+b.Size }

// ParseBlock reads "lo-hi" (inclusive) or one port.
func ParseBlock(s string) (Block, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || a < 0 || b < a {
		return Block{}, fmt.Errorf("ports %q: want lo-hi with 0 ≤ lo ≤ hi (e.g. 0-3)", s)
	}
	return Block{Lo: a, Size: b - a + 1}, nil
}

// CheckTenants refuses tenants that overlap, and under Strict or Centre any block that is not an
// aligned block of 2^j ports of fabric f (the reason from benes.Fabric.CheckBlock).
func CheckTenants(f *benes.Fabric, tenants []Block, alloc Allocation) error {
	for i, a := range tenants {
		if a.Size < 1 {
			return fmt.Errorf("tenant %d has no ports", i)
		}
		for _, b := range tenants[:i] {
			if a.Lo < b.Lo+b.Size && b.Lo < a.Lo+a.Size {
				return fmt.Errorf("tenants %s and %s share ports", b, a)
			}
		}
		if alloc != Shared {
			if err := f.CheckBlock(a.Lo, a.Size); err != nil {
				return fmt.Errorf("%s allocation: %w", alloc, err)
			}
		}
	}
	return nil
}

// VerifyTenants checks a schedule that serves tenants under alloc: every circuit joins two
// ports of one tenant, and under Strict every traversal is one its tenant's allocation allows
// (in Bar where the allocation holds the switch) and no switch that some tenant may set is used
// by another tenant; under Centre every traversal at the levels a tenant's block spans is on the
// tenant's own switches. Violations name the circuit, its tenant and the switch.
func VerifyTenants(s *Schedule, tenants []Block, alloc Allocation) []Violation {
	var vs []Violation
	f, _ := s.BenesFabric()
	owner := map[[2]int]int{} // a switch some tenant may set → that tenant
	users := map[[2]int]int{}
	for i := range s.Circuits {
		c := &s.Circuits[i]
		t := -1
		for k, b := range tenants {
			if b.Has(c.Src) && b.Has(c.Dst) {
				t = k
			}
		}
		if t < 0 {
			vs = append(vs, Violation{TenantViolation, i, fmt.Sprintf("%d→%d joins no tenant's ports to its own", c.Src, c.Dst)})
			continue
		}
		if f == nil || alloc == Shared {
			continue
		}
		b := tenants[t]
		for _, tr := range c.Path.All() {
			ok, bar := f.StrictUse(b.Lo, b.Size, tr)
			if alloc == Centre {
				// Only the tenant's own levels are its alone; the centre is shared.
				if !ok && ownLevel(f, b, tr) {
					vs = append(vs, Violation{TenantViolation, i, fmt.Sprintf("%d→%d (tenant %s) uses switch %d:%d, another tenant's", c.Src, c.Dst, b, tr.Stage, tr.Switch)})
				}
				continue
			}
			key := [2]int{tr.Stage, tr.Switch}
			switch {
			case !ok:
				vs = append(vs, Violation{TenantViolation, i, fmt.Sprintf("%d→%d (tenant %s) uses switch %d:%d lane %d→%d, outside its strict allocation", c.Src, c.Dst, b, tr.Stage, tr.Switch, tr.In, tr.Out)})
				continue
			case bar && tr.State() != benes.Bar:
				vs = append(vs, Violation{TenantViolation, i, fmt.Sprintf("%d→%d (tenant %s) sets switch %d:%d to cross, which its strict allocation holds in bar", c.Src, c.Dst, b, tr.Stage, tr.Switch)})
				continue
			case !bar:
				owner[key] = t
			}
			if u, seen := users[key]; !seen || u == t {
				users[key] = t
			} else {
				users[key] = -2 // several tenants; allowed only where every one holds it in Bar
			}
		}
	}
	keys := make([][2]int, 0, len(owner))
	for key := range owner {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, key := range keys {
		if users[key] == -2 {
			vs = append(vs, Violation{TenantViolation, -1, fmt.Sprintf("switch %d:%d, which tenant %s may set, is used by another tenant too", key[0], key[1], tenants[owner[key]])})
		}
	}
	return vs
}

// ownLevel says whether t is at a recursion level the block spans (below its j = log2 size).
func ownLevel(f *benes.Fabric, b Block, t benes.Traversal) bool {
	s := t.Stage
	if s > f.Levels()-1 {
		s = 2*f.Levels() - 2 - s
	}
	return 1<<(s+1) <= b.Size
}
