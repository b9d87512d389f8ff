package holo

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Algorithm names, as the CLI takes them.
const (
	Naive       = "naive"
	Ring        = "ring"
	Tree        = "tree"
	TreeRing    = "tree-ring"
	TreeRingAlt = "tree-ring-alt"
)

// Algorithms lists every broadcast algorithm of Er-El and Feitelson §3.1, in the paper's order.
var Algorithms = []string{Naive, Ring, Tree, TreeRing, TreeRingAlt}

// ParseAlgorithms reads "all" or a comma-separated list of algorithm names.
func ParseAlgorithms(s string) ([]string, error) {
	if s == "all" {
		return append([]string(nil), Algorithms...), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if !isAlgorithm(a) {
			return nil, fmt.Errorf("algorithm %q: want %s or all", a, strings.Join(Algorithms, ", "))
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

func isAlgorithm(a string) bool {
	for _, b := range Algorithms {
		if a == b {
			return true
		}
	}
	return false
}

// NewPlan builds the event schedule of algorithm for the parameters p.
func NewPlan(algorithm string, p Params) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch algorithm {
	case Naive:
		return naivePlan(p.Nodes), nil
	case Ring:
		return ringPlan(p.Nodes), nil
	case Tree:
		return treePlan(p.Nodes), nil
	case TreeRing:
		return treeRingPlan(p, false), nil
	case TreeRingAlt:
		return treeRingPlan(p, true), nil
	}
	return nil, fmt.Errorf("algorithm %q: want one of %s", algorithm, strings.Join(Algorithms, ", "))
}

// Simulate plans algorithm for p and runs the plan.
func Simulate(algorithm string, p Params) (*Result, error) {
	plan, err := NewPlan(algorithm, p)
	if err != nil {
		return nil, err
	}
	return Run(context.Background(), p, plan)
}

func newPlan(name string, n int) *Plan {
	return &Plan{Algorithm: name, Nodes: n, Sends: make([][]Send, n)}
}

// naivePlan: node 0 does CSet(0, i) and sends, for i = 1..N−1 (§3.1.1). No FU: plain unicast.
func naivePlan(n int) *Plan {
	plan := newPlan(Naive, n)
	for i := 1; i < n; i++ {
		plan.Sends[0] = append(plan.Sends[0], Send{To: i, TTL: 1, FromApp: true})
	}
	plan.Stages = n - 1
	return plan
}

// ringPlan: every node but the last sets its link to the next (all at once), node 0 sends with
// TTL N−1 and the FUs forward and deliver (§3.1.2).
func ringPlan(n int) *Plan {
	plan := newPlan(Ring, n)
	for i := 0; i < n-1; i++ {
		plan.Setup = append(plan.Setup, SetLink{Node: i, To: i + 1})
	}
	plan.Sends[0] = []Send{{To: 1, TTL: n - 1, FromApp: true, Broadcast: true}}
	plan.Stages = 1
	return plan
}

// treePlan: in stage s every node i < 2^s that has the message does CSet(i, i+2^s) and forwards
// the message its FU retained; node 0's first send comes from its application (§3.1.3). Stages
// where i+2^s ≥ N are skipped, so N need not be a power of two.
func treePlan(n int) *Plan {
	plan := newPlan(Tree, n)
	stages := bits.Len(uint(n - 1)) // ⌈lg N⌉
	for s := 0; s < stages; s++ {
		for i := 0; i < 1<<s && i+1<<s < n; i++ {
			plan.Sends[i] = append(plan.Sends[i], Send{To: i + 1<<s, TTL: 1, FromApp: i == 0 && s == 0, Broadcast: true})
		}
	}
	plan.Stages = stages
	return plan
}

// gap is an unreached run [lo, hi] of the ring; node lo−1 has the message and its ring chain
// runs into the gap.
type gap struct{ lo, hi int }

// treeRingPlan plans the tree embedded in a ring (§3.1.4). Each stage, the chain running into a
// gap covers its next k nodes while nodes that have the message branch into the rest of it: in
// the plain version only the gap's end node, once, to q = e + ⌊(F + k)/2⌋ (F the fragment size
// with e), which leaves the two new fragments about equal; in the alternating version every node
// that has the message branches in every stage, targets spread evenly over the gaps. Targets start
// new chains; every chain's TTL stops it just before the next target.
//
// The rounding of k can put a target where the chain would arrive first; a gap's end node
// branches only where its branch lands no later than the chain (minGain hops ahead of it).
func treeRingPlan(p Params, alternating bool) *Plan {
	n, k := p.Nodes, p.K()
	sf := p.S() * p.TF
	// An end node's branch leaves after its own forward (or its header, if later), takes T_c,
	// then one forward: the chain covers a hop per S·T_f in the meantime.
	minGain := int(math.Ceil((math.Max(sf, p.HeaderCost()) + p.TC() + sf) / sf * (1 - 1e-12)))
	name := TreeRing
	if alternating {
		name = TreeRingAlt
	}
	plan := newPlan(name, n)
	plan.K = k
	arcs := make([][]int, n) // branch targets per node, in stage order
	target := make([]bool, n)
	gaps := []gap{{1, n - 1}}
	var others []int // nodes with the message whose ring neighbour has it too
	for len(gaps) > 0 {
		plan.Stages++
		var next []gap
		type split struct {
			g    gap
			rest int  // unreached after this stage's chain
			m    int  // branches into it
			own  bool // one of them is the end node's
		}
		splits := make([]split, 0, len(gaps))
		for _, g := range gaps {
			splits = append(splits, split{g: g, rest: g.hi - g.lo + 1 - k})
		}
		// The end node's own branch (both versions), where it gains on the chain.
		for i := range splits {
			if e := splits[i].g.lo - 1; splits[i].rest >= 1 && e+(splits[i].g.hi-e+1+k)/2-e >= minGain {
				splits[i].m, splits[i].own = 1, true
			}
		}
		var helpers []int // which helper branches into which split, in order
		var helperSplit []int
		if alternating {
			h := &splitHeap{}
			for i := range splits {
				if splits[i].rest-splits[i].m >= 1 {
					heap.Push(h, splitItem{i: i, rest: splits[i].rest, m: splits[i].m})
				}
			}
			for _, o := range others {
				if h.Len() == 0 {
					break
				}
				it := heap.Pop(h).(splitItem)
				splits[it.i].m++
				it.m++
				helpers = append(helpers, o)
				helperSplit = append(helperSplit, it.i)
				if it.rest-it.m >= 1 {
					heap.Push(h, it)
				}
			}
		}
		var newOthers []int
		byGap := make([][]int, len(splits))
		for hi, si := range helperSplit {
			byGap[si] = append(byGap[si], helpers[hi])
		}
		for si, sp := range splits {
			g, e := sp.g, sp.g.lo-1
			chainEnd := min(g.lo+k-1, g.hi)
			// e and the chain's nodes but its last are now others (their neighbours have it).
			newOthers = append(newOthers, e)
			for v := g.lo; v < chainEnd; v++ {
				newOthers = append(newOthers, v)
			}
			if sp.m == 0 {
				// Left to the chain: it runs on to the end of the gap.
				newOthers = append(newOthers, chainEnd)
				continue
			}
			var tgts []int
			if !alternating {
				f := g.hi - e + 1
				q := e + (f+k)/2
				tgts = []int{q}
				if chainEnd+1 <= q-1 {
					next = append(next, gap{chainEnd + 1, q - 1})
				} else {
					newOthers = append(newOthers, chainEnd)
				}
				if q+1 <= g.hi {
					next = append(next, gap{q + 1, g.hi})
				} else {
					newOthers = append(newOthers, q)
				}
			} else {
				// rest nodes after the chain: m targets and rest−m unreached split into m+1 near
				// equal parts u_0..u_m; part 0 continues the chain, part j follows target j.
				u := sp.rest - sp.m
				pos := chainEnd + 1
				for j := 0; j <= sp.m; j++ {
					part := u / (sp.m + 1)
					if j >= sp.m+1-u%(sp.m+1) {
						part++
					}
					owner := chainEnd
					if j > 0 {
						owner = pos
						tgts = append(tgts, pos)
						pos++
					}
					if part > 0 {
						next = append(next, gap{pos, pos + part - 1})
					} else {
						newOthers = append(newOthers, owner)
					}
					pos += part
				}
			}
			senders := byGap[si]
			if sp.own {
				senders = append([]int{e}, senders...)
			}
			for j, t := range tgts {
				arcs[senders[j]] = append(arcs[senders[j]], t)
				target[t] = true
			}
		}
		if alternating {
			others = append(others, newOthers...)
		}
		unreached := 0
		for _, g := range next {
			unreached += g.hi - g.lo + 1
		}
		plan.Reached = append(plan.Reached, n-unreached)
		gaps = next
	}
	// Chains: from each origin (node 0 and every target) to just before the next target.
	chainEnd := make([]int, n)
	end := n - 1
	for v := n - 1; v >= 0; v-- {
		chainEnd[v] = end
		if v == 0 || target[v] {
			end = v - 1
		}
	}
	for v := 0; v < n-1; v++ {
		if chainEnd[v] > v {
			plan.Setup = append(plan.Setup, SetLink{Node: v, To: v + 1})
		}
	}
	plan.Sends[0] = []Send{{To: 1, TTL: chainEnd[0], FromApp: true, Broadcast: true}}
	for v, ts := range arcs {
		for _, t := range ts {
			plan.Sends[v] = append(plan.Sends[v], Send{To: t, TTL: chainEnd[t] - t + 1, Broadcast: true})
		}
	}
	return plan
}

// AlternatingReached is the number of nodes that have the message after stage i of the
// alternating tree embedded in a ring while the ring is large enough, from Er-El and Feitelson
// §3.1.4's recurrences: e(i) = 2·e(i−1) + o(i−1) end nodes, o(i) = k·e(i−1) + o(i−1) others, with
// e(0) = 1 (the source) and o(0) = 0.
func AlternatingReached(k, i int) int {
	e, o := 1, 0
	for ; i > 0; i-- {
		e, o = 2*e+o, k*e+o
	}
	return e + o
}

type splitItem struct{ i, rest, m int }

// splitHeap orders gaps by the unreached nodes per block after one more branch, largest first.
type splitHeap []splitItem

func (h splitHeap) Len() int { return len(h) }
func (h splitHeap) Less(a, b int) bool {
	// (rest−m)/(m+1) compared without division; ties by gap order.
	x, y := int64(h[a].rest-h[a].m)*int64(h[b].m+1), int64(h[b].rest-h[b].m)*int64(h[a].m+1)
	if x != y {
		return x > y
	}
	return h[a].i < h[b].i
}
func (h splitHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *splitHeap) Push(x any)   { *h = append(*h, x.(splitItem)) }
func (h *splitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
