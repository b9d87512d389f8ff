package matching

import "fmt"

// Graph is a bipartite graph: left vertex u (0 ≤ u < len(Adj)) is adjacent to the right vertices
// listed in Adj[u], each in [0, Right).
type Graph struct {
	Adj   [][]int
	Right int
}

// Check reports the first neighbour out of range, so that the algorithms below may index freely.
func (g Graph) Check() error {
	if g.Right < 0 {
		return fmt.Errorf("matching: graph has %d right vertices", g.Right)
	}
	for u, vs := range g.Adj {
		for _, v := range vs {
			if v < 0 || v >= g.Right {
				return fmt.Errorf("matching: left vertex %d lists neighbour %d, right vertices are [0, %d)", u, v, g.Right)
			}
		}
	}
	return nil
}

// MaxMatching returns a maximum-cardinality matching of g (mate[u] = right partner of u, or −1) and
// its size, by Hopcroft–Karp: O(E·√V).
//
// warm, if not nil, is a matching to start from (same form as the result); edges of warm that are
// not in g are dropped, as is any edge whose right vertex an earlier left vertex already holds.
// Starting from a near-maximum matching costs one or two phases instead of √V: this is what makes
// repeated extraction (BvN) cheap, since each step removes only the few edges it used up.
func MaxMatching(g Graph, warm []int) ([]int, int, error) {
	if err := g.Check(); err != nil {
		return nil, 0, err
	}
	if warm != nil && len(warm) != len(g.Adj) {
		return nil, 0, fmt.Errorf("matching: warm start has %d entries, graph has %d left vertices", len(warm), len(g.Adj))
	}
	h := newHK(len(g.Adj), g.Right)
	size := h.seed(g, warm)
	size += h.run(g)
	return h.mateL, size, nil
}

// hk is the Hopcroft–Karp state: the matching from both sides and the BFS layering.
type hk struct {
	mateL, mateR []int
	dist         []int
	queue        []int
	// it[u] is how far u's adjacency list the current phase's DFS has advanced; keeping it across
	// the DFS calls of one phase makes a phase O(E) (each edge is tried once).
	it    []int
	stack []int
	// limit is the BFS layer from which the shortest augmenting paths reach a free right vertex;
	// a phase augments along shortest paths only, which is what bounds the phases by O(√V).
	limit int
}

const unmatched = -1

func newHK(left, right int) *hk {
	// One array for the working lists; mateL, which the caller keeps, has its own.
	buf := make([]int, right+3*left)
	h := &hk{
		mateL: make([]int, left),
		mateR: buf[:right:right],
		dist:  buf[right : right+left : right+left],
		queue: buf[right+left : right+left : right+2*left],
		it:    buf[right+2*left:],
	}
	for i := range h.mateL {
		h.mateL[i] = unmatched
	}
	for i := range h.mateR {
		h.mateR[i] = unmatched
	}
	return h
}

// seed installs the usable edges of warm and returns how many it kept.
func (h *hk) seed(g Graph, warm []int) int {
	size := 0
	for u, v := range warm {
		if v < 0 || v >= g.Right || h.mateR[v] != unmatched {
			continue
		}
		for _, w := range g.Adj[u] {
			if w == v {
				h.mateL[u], h.mateR[v] = v, u
				size++
				break
			}
		}
	}
	return size
}

const inf = int(^uint(0) >> 1)

// bfs layers the left vertices by alternating-path distance from the free left vertices and
// reports whether some free right vertex is reachable.
func (h *hk) bfs(g Graph) bool {
	h.queue = h.queue[:0]
	for u, v := range h.mateL {
		if v == unmatched {
			h.dist[u] = 0
			h.queue = append(h.queue, u)
		} else {
			h.dist[u] = inf
		}
	}
	h.limit = inf
	for qi := 0; qi < len(h.queue); qi++ {
		u := h.queue[qi]
		if h.dist[u] >= h.limit {
			break // the queue is in layer order: nothing beyond the shortest paths is needed
		}
		for _, v := range g.Adj[u] {
			w := h.mateR[v]
			if w == unmatched {
				h.limit = h.dist[u]
			} else if h.dist[w] == inf {
				h.dist[w] = h.dist[u] + 1
				h.queue = append(h.queue, w)
			}
		}
	}
	return h.limit != inf
}

// augment searches, iteratively so that long paths cannot exhaust the goroutine stack, for an
// augmenting path from free left vertex root along the BFS layers, and flips it if found.
func (h *hk) augment(g Graph, root int) bool {
	h.stack = append(h.stack[:0], root)
	for len(h.stack) > 0 {
		u := h.stack[len(h.stack)-1]
		if h.it[u] == len(g.Adj[u]) {
			h.dist[u] = inf // dead end for the rest of this phase
			h.stack = h.stack[:len(h.stack)-1]
			continue
		}
		v := g.Adj[u][h.it[u]]
		w := h.mateR[v]
		if w == unmatched && h.dist[u] == h.limit {
			// Flip the path: stack[k] takes the right vertex stack[k] was advancing on.
			for k := len(h.stack) - 1; k >= 0; k-- {
				x := h.stack[k]
				y := g.Adj[x][h.it[x]]
				h.mateL[x], h.mateR[y] = y, x
				h.it[x]++
			}
			return true
		}
		if w != unmatched && h.dist[u] < h.limit && h.dist[w] == h.dist[u]+1 {
			h.stack = append(h.stack, w)
			continue
		}
		h.it[u]++
	}
	return false
}

// run augments until no augmenting path remains and returns how many augmentations it made.
func (h *hk) run(g Graph) int {
	added := 0
	for h.bfs(g) {
		for u := range h.it {
			h.it[u] = 0
		}
		for u, v := range h.mateL {
			if v == unmatched && h.augment(g, u) {
				added++
			}
		}
	}
	return added
}
