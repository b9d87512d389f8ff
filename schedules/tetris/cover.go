package tetris

import "math/bits"

// bitset is a set of vertex indices, 64 to a word.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) clear(i int)    { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

func (b bitset) reset() {
	for i := range b {
		b[i] = 0
	}
}

// sideMatcher keeps, for one side of the bipartite candidate graph, a matching that saturates a
// required set of left vertices (the maximum-degree endpoints of that side still to be covered)
// using edges adj and only right vertices in free.
//
// Checking the two sides separately is enough (Mendelsohn–Dulmage): if one matching covers the
// required transmitters and another covers the required receivers, some single matching covers
// both. So the degree-coverage test is two independent saturation problems, each solved with
// augmenting (alternating) paths.
type sideMatcher struct {
	adj []bitset // left vertex -> right vertices it may be matched to
	// words holds adj row after row (adj[l] is words[l·w:(l+1)·w], w = len(free)), for loops that
	// index it without a slice header per row.
	words  bitset
	free   bitset  // right vertices still available
	matchL []int32 // left -> right partner, or -1
	matchR []int32 // right -> left partner, or -1
	// exposed is free right vertices with no partner: where an augmenting path may end. Kept with
	// the matching so that a search first looks for one next to it (most searches end there).
	exposed bitset
	seen    bitset // right vertices visited by the current augmenting search
	stack   []int32
}

func newSideMatcher(n int) *sideMatcher {
	w := (n + 63) / 64
	words := make(bitset, (n+3)*w)
	match := make([]int32, 2*n)
	m := &sideMatcher{
		adj:     make([]bitset, n),
		words:   words[: n*w : n*w],
		free:    words[n*w : (n+1)*w : (n+1)*w],
		exposed: words[(n+1)*w : (n+2)*w : (n+2)*w],
		seen:    words[(n+2)*w:],
		matchL:  match[:n:n],
		matchR:  match[n:],
		stack:   make([]int32, 0, n),
	}
	for i := range m.adj {
		m.adj[i] = words[i*w : (i+1)*w : (i+1)*w]
	}
	return m
}

// clearMatching forgets the matching (the graph and the free set are kept).
func (m *sideMatcher) clearMatching() {
	for i := range m.matchL {
		m.matchL[i], m.matchR[i] = -1, -1
	}
	copy(m.exposed, m.free)
}

// unmatchLeft drops left vertex l's edge of the matching; its partner, if free, is exposed.
func (m *sideMatcher) unmatchLeft(l int) {
	if r := m.matchL[l]; r >= 0 {
		m.matchL[l], m.matchR[r] = -1, -1
		if m.free.has(int(r)) {
			m.exposed.set(int(r))
		}
	}
}

// unmatchRight drops right vertex r's edge of the matching and returns its former partner (or
// −1); r is exposed again if it is free.
func (m *sideMatcher) unmatchRight(r int) int {
	l := m.matchR[r]
	if l >= 0 {
		m.matchL[l], m.matchR[r] = -1, -1
		if m.free.has(r) {
			m.exposed.set(r)
		}
	}
	return int(l)
}

// remove takes right vertex r out of the free set.
func (m *sideMatcher) remove(r int) {
	m.free.clear(r)
	m.exposed.clear(r)
}

// augment looks for an alternating path from left vertex l to an unmatched free right vertex and,
// if it finds one, flips it so that l becomes matched. Vertices already matched stay matched.
// Whether a path exists depends only on the graph and the matching's vertex sets, not on which
// path is taken, so looking first for an exposed neighbour changes the matching held but no
// answer.
func (m *sideMatcher) augment(l int) bool {
	a := m.adj[l]
	for w := range a {
		if x := a[w] & m.exposed[w]; x != 0 {
			r := w<<6 | bits.TrailingZeros64(x)
			m.matchL[l], m.matchR[r] = int32(r), int32(l)
			m.exposed.clear(r)
			return true
		}
	}
	// No exposed neighbour: every free neighbour is matched, so the path goes on through its
	// partner.
	for w := range a {
		cand := a[w] & m.free[w] &^ m.seen[w]
		for cand != 0 {
			r := w<<6 | bits.TrailingZeros64(cand)
			cand &= cand - 1
			m.seen.set(r)
			if m.augment(int(m.matchR[r])) {
				m.matchL[l], m.matchR[r] = int32(r), int32(l)
				return true
			}
		}
	}
	return false
}

// saturate extends the current matching until every left vertex in req is matched, and reports
// whether that is possible. Augmenting never unmatches a vertex, so on false the vertices of req
// that were matched before are still matched.
func (m *sideMatcher) saturate(req []int) bool {
	ok := true
	for _, l := range req {
		if m.matchL[l] >= 0 {
			continue
		}
		m.seen.reset()
		if !m.augment(l) {
			ok = false
		}
	}
	return ok
}

// matchingSnapshot is a copy of a matching, so that a tentative change can be undone.
type matchingSnapshot struct {
	matchL, matchR []int32
	exposed        bitset
}

func newMatchingSnapshot(n int) matchingSnapshot {
	match := make([]int32, 2*n)
	return matchingSnapshot{match[:n:n], match[n:], newBitset(n)}
}

func (m *sideMatcher) snapshot(dst *matchingSnapshot) {
	copy(dst.matchL, m.matchL)
	copy(dst.matchR, m.matchR)
	copy(dst.exposed, m.exposed)
}

// restore undoes everything since snapshot; the free set must be the one of the snapshot.
func (m *sideMatcher) restore(src *matchingSnapshot) {
	copy(m.matchL, src.matchL)
	copy(m.matchR, src.matchR)
	copy(m.exposed, src.exposed)
}

// reachFrom is the search augment(l) would make after l lost its partner excl (which leaves the
// free set), without changing anything: it reports whether an exposed right vertex other than excl
// is reachable from l by an alternating path and, if not, leaves in reach every right vertex that
// is. A right vertex r then becomes a possible end when its partner loses it: exactly when r is in
// reach.
func (m *sideMatcher) reachFrom(l, excl int, reach bitset) bool {
	reach.reset()
	reach.set(excl)
	stack := append(m.stack[:0], int32(l))
	defer func() { m.stack = stack[:0] }()
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		a := m.adj[x]
		for w := range a {
			c := a[w] & m.free[w] &^ reach[w]
			if c == 0 {
				continue
			}
			if c&m.exposed[w] != 0 {
				return true
			}
			reach[w] |= c
			for c != 0 {
				r := w<<6 | bits.TrailingZeros64(c)
				c &= c - 1
				stack = append(stack, m.matchR[r])
			}
		}
	}
	reach.clear(excl)
	return false
}

// recoverable marks in good every left vertex that, were its partner taken away, could be matched
// again by an alternating path to an exposed right vertex or to extra (a right vertex about to
// lose its partner; −1 for none). It searches backwards from the path ends: a right vertex leads to
// an end when it is one or its partner is good, and a left vertex is good when it has an edge to
// such a right vertex; adjT is the transposed graph (right vertex -> left vertices). A good left
// vertex's path never passes its own partner, which leads only back to it, so taking the partner
// away does not change the answer.
func (m *sideMatcher) recoverable(extra int, adjT []bitset, good, ends bitset) {
	good.reset()
	copy(ends, m.exposed)
	stack := m.stack[:0]
	for w, x := range ends {
		for x != 0 {
			stack = append(stack, int32(w<<6|bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
	if extra >= 0 && !ends.has(extra) {
		ends.set(extra)
		stack = append(stack, int32(extra))
	}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		a := adjT[r]
		for w := range a {
			c := a[w] &^ good[w]
			good[w] |= c
			for c != 0 {
				l := w<<6 | bits.TrailingZeros64(c)
				c &= c - 1
				if p := m.matchL[l]; p >= 0 && !ends.has(int(p)) {
					ends.set(int(p))
					stack = append(stack, p)
				}
			}
		}
	}
	m.stack = stack[:0]
}
