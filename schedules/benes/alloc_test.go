package benes

import (
	"strings"
	"testing"
)

// TestStrictAllocationEmbedsSubBenes: for every aligned block of every fabric up to 32 ports,
// every path of the block's own Beneš network embeds to a physical path of the big fabric that
// its allocation allows, the block's free switches map one to one (a sub switch's state is its
// image's), and two blocks that share a switch both pass it straight in Bar on different lanes.
func TestStrictAllocationEmbedsSubBenes(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16, 32} {
		f, _ := New(n)
		for m := 2; m <= n; m *= 2 {
			sub, _ := New(m)
			type use struct{ block, in, out int }
			users := map[[2]int][]use{}
			for lo := 0; lo < n; lo += m {
				if err := f.CheckBlock(lo, m); err != nil {
					t.Fatalf("n %d block %d+%d: %v", n, lo, m, err)
				}
				image := map[[2]int][2]int{} // sub switch → big switch
				for src := range m {
					for dst := range m {
						for c := uint32(0); c < uint32(m/2); c++ {
							p := sub.NewPath(src, dst, c)
							q := f.Embed(lo, m, src, dst, p)
							if err := f.CheckPath(lo+src, lo+dst, q); err != nil {
								t.Fatalf("n %d block %d+%d: %d→%d choices %d: %v", n, lo, m, src, dst, c, err)
							}
							free := []Traversal{}
							for _, tr := range q.All() {
								ok, bar := f.StrictUse(lo, m, tr)
								if !ok || bar && tr.State() != Bar {
									t.Fatalf("n %d block %d+%d: %d→%d uses %v outside its allocation (allowed %v, bar only %v)", n, lo, m, src, dst, tr, ok, bar)
								}
								if !bar {
									free = append(free, tr)
								}
								users[[2]int{tr.Stage, tr.Switch}] = append(users[[2]int{tr.Stage, tr.Switch}], use{lo, tr.In, tr.Out})
							}
							// The sub path's traversals map in order onto the free ones.
							if len(free) != p.Len() {
								t.Fatalf("n %d block %d+%d: %d free traversals for a %d-hop sub path", n, lo, m, len(free), p.Len())
							}
							for i, tr := range p.All() {
								if free[i].State() != tr.State() || free[i].In != tr.In && i < (p.Len()+1)/2 {
									t.Fatalf("n %d block %d+%d: hop %d %v maps to %v", n, lo, m, i, tr, free[i])
								}
								k := [2]int{tr.Stage, tr.Switch}
								v := [2]int{free[i].Stage, free[i].Switch}
								if w, ok := image[k]; ok && w != v {
									t.Fatalf("sub switch %v maps to %v and %v", k, w, v)
								}
								image[k] = v
							}
						}
					}
				}
			}
			for sw, us := range users {
				for _, a := range us {
					for _, b := range us {
						if a.block == b.block {
							continue
						}
						okA, barA := f.StrictUse(a.block, m, Traversal{Stage: sw[0], Switch: sw[1], In: a.in, Out: a.out})
						if !okA || !barA || a.in != a.out || a.in == b.in {
							t.Fatalf("n %d m %d: switch %v shared by blocks %d and %d on lanes %d/%d", n, m, sw, a.block, b.block, a.in, b.in)
						}
					}
				}
			}
		}
	}
}

func TestCheckBlockRefusals(t *testing.T) {
	f, _ := New(8)
	for _, tc := range []struct {
		lo, size int
		want     string
	}{
		{0, 3, "not a power of two"},
		{2, 4, "must start at a multiple of 4 to be a sub-Beneš (e.g. 0-3)"},
		{6, 4, "must start at a multiple of 4"},
		{4, 1, "at least 2 ports"},
		{8, 2, "not within the 8-port fabric"},
	} {
		err := f.CheckBlock(tc.lo, tc.size)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("block %d+%d: %v, want %q", tc.lo, tc.size, err, tc.want)
		}
	}
}
