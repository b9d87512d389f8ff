package tetris

import "math/bits"

// bitset is a set of vertex indices, 64 to a word.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)   { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) clear(i int) { b[i>>6] &^= 1 << (uint(i) & 63) }

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
	adj    []bitset // left vertex -> right vertices it may be matched to
	free   bitset   // right vertices still available
	matchL []int32  // left -> right partner, or -1
	matchR []int32  // right -> left partner, or -1
	seen   bitset   // right vertices visited by the current augmenting search
	tmp    bitset
}

func newSideMatcher(n int) *sideMatcher {
	m := &sideMatcher{
		adj:    make([]bitset, n),
		free:   newBitset(n),
		matchL: make([]int32, n),
		matchR: make([]int32, n),
		seen:   newBitset(n),
		tmp:    newBitset(n),
	}
	words := make(bitset, n*len(m.free))
	for i := range m.adj {
		m.adj[i] = words[i*len(m.free) : (i+1)*len(m.free) : (i+1)*len(m.free)]
	}
	return m
}

// clearMatching forgets the matching (the graph is kept).
func (m *sideMatcher) clearMatching() {
	for i := range m.matchL {
		m.matchL[i], m.matchR[i] = -1, -1
	}
}

// augment looks for an alternating path from left vertex l to an unmatched free right vertex and,
// if it finds one, flips it so that l becomes matched. Vertices already matched stay matched.
func (m *sideMatcher) augment(l int) bool {
	a := m.adj[l]
	for w := range a {
		cand := a[w] & m.free[w] &^ m.seen[w]
		for cand != 0 {
			r := w<<6 | bits.TrailingZeros64(cand)
			cand &= cand - 1
			m.seen.set(r)
			if p := m.matchR[r]; p < 0 || m.augment(int(p)) {
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

// snapshot copies the matching into dst (same length buffers) so a tentative change can be undone.
func (m *sideMatcher) snapshot(dstL, dstR []int32) {
	copy(dstL, m.matchL)
	copy(dstR, m.matchR)
}

func (m *sideMatcher) restore(srcL, srcR []int32) {
	copy(m.matchL, srcL)
	copy(m.matchR, srcR)
}
