package tetris

import (
	"fmt"
	"math"
	"slices"
)

// candidate is one residual demand (u, v) with its cost. It holds only what selection reads (24
// bytes): the planner streams through every candidate several times per iteration, ~n² of them.
type candidate struct {
	u, v  int32
	bytes int64
	cost  float64 // c_uv = s_uv − α_r + max(W_u, W_v), s_uv = Start(S, p_uv) for a best path p_uv
}

// selector picks one planning matching (Tetris §3.1, Algorithm 2). Its buffers are reused
// across iterations so that planning does not allocate per matching.
type selector struct {
	n          int
	tx, rx     *sideMatcher // tx: required transmitters -> receivers; rx: required receivers -> transmitters
	usedTx     []bool
	usedRx     []bool
	thresholds []float64
	walk       []walkItem
	eps        []int32  // endpoints in walk order, kept: the next walk's order starts from it
	wKey       []uint64 // sortByW's keys
	head, fill []int32  // per key endpoint, its candidates' range in items
	items      []int32
	room       []int
	// indexed says head, fill and items already list the candidates of this iteration under
	// their key endpoints (indexReset, indexAdd); greedy lists them itself otherwise.
	indexed bool
	buf     []int32
	seenTx  []bool
	seenRx  []bool
	snap    [2]matchingSnapshot
	// ref classifies the current key endpoint's candidates; epoch counts successful takes, so ref
	// is valid while its epoch is the current one.
	ref   *refusals
	epoch int
	w     []float64 // W_e of the walk in progress
	// loaded says the side matchers hold A(loadedH) with both sides of C covered and no endpoint
	// taken, as a successful covers call leaves them.
	loaded  bool
	loadedH float64
	// graphOK says the matchers' adjacency is A(graphH) of the current candidates.
	graphOK bool
	graphH  float64
}

func newSelector(n int) *selector {
	// One allocation per element type: at small n the allocations, not the work, dominate.
	flags := make([]bool, 4*n)
	i32 := make([]int32, 6*n)
	s := &selector{
		n:      n,
		tx:     newSideMatcher(n),
		rx:     newSideMatcher(n),
		usedTx: flags[:n:n],
		usedRx: flags[n : 2*n : 2*n],
		seenTx: flags[2*n : 3*n : 3*n],
		seenRx: flags[3*n:],
		head:   i32[: 0 : 2*n],
		fill:   i32[2*n : 2*n : 4*n],
		eps:    i32[4*n:],
		wKey:   make([]uint64, 2*n),
	}
	for e := range s.eps {
		s.eps[e] = int32(e)
	}
	for i := range s.snap {
		s.snap[i] = newMatchingSnapshot(n)
	}
	s.ref = newRefusals(n)
	return s
}

// load builds the candidate graph A = {(u,v) : cost ≤ h} into both side matchers, with every
// endpoint free and no matching.
func (s *selector) load(cands []candidate, h float64) {
	if !s.graphOK || s.graphH != h {
		s.beginGraph(h)
		for _, c := range cands {
			if c.cost <= h {
				s.addEdge(int(c.u), int(c.v))
			}
		}
	}
	for i := 0; i < s.n; i++ {
		s.usedTx[i], s.usedRx[i] = false, false
	}
	for _, m := range []*sideMatcher{s.tx, s.rx} {
		m.free.reset()
		for i := 0; i < s.n; i++ {
			m.free.set(i)
		}
		m.clearMatching()
	}
}

// beginGraph empties the candidate graph, to be filled with A(h) by addEdge: the planner does so
// while it builds this iteration's candidates, saving load a pass over them. greedy forgets the
// graph, since the next iteration's candidates are new.
func (s *selector) beginGraph(h float64) {
	// words is every adjacency row, back to back.
	clear(s.tx.words)
	clear(s.rx.words)
	s.graphOK, s.graphH = true, h
}

// addEdge adds candidate (u, v) to the graph.
func (s *selector) addEdge(u, v int) {
	s.tx.adj[u].set(v)
	s.rx.adj[v].set(u)
}

// covers reports whether A(h) contains a matching covering every endpoint of C (cTx transmitters,
// cRx receivers), leaving in the side matchers one matching per side that does.
func (s *selector) covers(cands []candidate, h float64, cTx, cRx []int) bool {
	s.load(cands, h)
	ok := s.tx.saturate(cTx) && s.rx.saturate(cRx)
	s.loaded, s.loadedH = ok, h
	return ok
}

// threshold finds H, the smallest value ≥ B for which A(H) contains a matching covering C.
// A(H) changes only at candidate costs, so the values worth trying are B itself and the distinct
// costs above it; feasibility only grows with H, so a binary search over them finds the smallest.
// When every cost is ≤ B the only value is B, where A holds every candidate.
func (s *selector) threshold(cands []candidate, b float64, cTx, cRx []int) (float64, error) {
	s.loaded = false
	// Most often A(B) already covers C; then there is nothing to sort or search.
	if s.covers(cands, b, cTx, cRx) {
		return b, nil
	}
	ts := append(s.thresholds[:0], b)
	for _, c := range cands {
		if c.cost > b {
			ts = append(ts, c.cost)
		}
	}
	slices.Sort(ts[1:])
	ts = slices.Compact(ts)
	s.thresholds = ts
	// Every candidate is in A at the largest value, and every bipartite graph has a matching
	// covering all of its maximum-degree vertices (König), so the search cannot fail unless the
	// caller's C is not the maximum-degree set.
	if !s.covers(cands, ts[len(ts)-1], cTx, cRx) {
		return 0, fmt.Errorf("tetris: no matching of the residual demand covers the %d maximum-degree endpoints", len(cTx)+len(cRx))
	}
	lo, hi := 1, len(ts)-1 // ts[0] = B is not feasible, ts[hi] is
	for lo < hi {
		mid := (lo + hi) / 2
		if s.covers(cands, ts[mid], cTx, cRx) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return ts[lo], nil
}

// greedy walks A(h) by decreasing max(W_u, W_v), ties by decreasing R_uv (then by candidate
// order, which the planner makes (u, v) order, so the result is deterministic), and keeps (u, v)
// when both endpoints are free and the candidates that remain between free endpoints can still
// cover every endpoint of C not yet matched. w holds W_e, transmitters then receivers. It appends
// the indices of the chosen candidates to m in the order chosen and returns m.
//
// Walking every candidate this way always ends with C covered: an endpoint of C left unmatched would
// have an edge to a free endpoint in the final covering matching, and adding that edge was feasible
// when it was reached, since the free endpoints only shrink.
//
// The walk does not sort A. A candidate's key is the W of its busier endpoint, so the walk visits
// endpoints by decreasing W, and at each one (or each set of endpoints with equal W) only the
// candidates it holds the key for, among those whose endpoints are both still free, in order of
// R_uv. Once an endpoint is matched its candidates are never looked at again, so a walk over a
// dense A of ~n² candidates costs about |A| steps instead of |A|·log|A|.
func (s *selector) greedy(cands []candidate, h float64, w []float64, cTx, cRx []int, m []int) []int {
	// threshold usually ends on a successful covers(H), which leaves exactly the graph and covering
	// matchings the walk starts from.
	if !s.loaded || s.loadedH != h {
		s.load(cands, h)
		s.tx.saturate(cTx)
		s.rx.saturate(cRx)
	}
	s.loaded, s.graphOK = false, false
	s.epoch++ // a new graph: no classification carries over
	s.w = w
	n := s.n
	// Endpoints by decreasing W (ties by index, only to make the sort deterministic).
	eps := s.sortByW(w[:2*n])
	if !s.indexed {
		// List each candidate of A under its key endpoint (the transmitter when W ties).
		room := s.room[:0]
		for range 2 * n {
			room = append(room, 0)
		}
		for i := range cands {
			if c := &cands[i]; c.cost <= h {
				room[s.keyOf(c)]++
			}
		}
		s.room = room
		s.indexReset(room[:n], room[n:])
		for i := range cands {
			if c := &cands[i]; c.cost <= h {
				s.indexAdd(s.keyOf(c), i)
			}
		}
	}
	s.indexed = false
	head, fill, items := s.head, s.fill, s.items
	used := func(e int) bool {
		if e < n {
			return s.usedTx[e]
		}
		return s.usedRx[e-n]
	}
	for lo := 0; lo < len(eps); {
		hi := lo + 1
		for hi < len(eps) && w[eps[hi]] == w[eps[lo]] {
			hi++
		}
		if hi-lo == 1 {
			// One endpoint (the usual case): offer its best live candidate in A (more bytes, then
			// earlier: its list is in candidate order) before gathering the others, which only a
			// refusal needs.
			e := int(eps[lo])
			lo = hi
			if used(e) {
				continue
			}
			best := bestLive(cands, items[head[e]:fill[e]], h, e < n, s.usedTx, s.usedRx)
			if best < 0 {
				continue
			}
			if s.offer(&cands[best], e) {
				m = append(m, int(best))
				continue
			}
			buf := s.buf[:0]
			for _, i := range items[head[e]:fill[e]] {
				if c := &cands[i]; i != best && c.cost <= h && !s.usedTx[c.u] && !s.usedRx[c.v] {
					buf = append(buf, i)
				}
			}
			s.buf = buf
			m = s.offerGroup(cands, buf, true, m)
			continue
		}
		// The live candidates of A keyed on this group of equal-W endpoints.
		buf := s.buf[:0]
		for _, e := range eps[lo:hi] {
			if used(int(e)) {
				continue
			}
			for _, i := range items[head[e]:fill[e]] {
				if c := &cands[i]; c.cost <= h && !s.usedTx[c.u] && !s.usedRx[c.v] {
					buf = append(buf, i)
				}
			}
		}
		s.buf = buf
		m = s.offerGroup(cands, buf, hi-lo == 1, m)
		lo = hi
	}
	return m
}

// bestLive is the best candidate of list (a key endpoint's, which is free) in A(h) whose partner
// is free: more bytes, then earlier (the list is in candidate order); −1 if there is none. tx says
// the key endpoint is the transmitter, so only the receivers can be taken. Whether a candidate is
// live and better is a coin flip to the branch predictor, so the scan keeps the best without
// branching on it.
//
// On amd64 it runs as bestLiveAsm (bestlive_amd64.s); this is the definition that one is tested
// against, and the version elsewhere.
func bestLiveGo(cands []candidate, list []int32, h float64, tx bool, usedTx, usedRx []bool) int32 {
	best, bytes := int32(-1), int64(math.MinInt64)
	if tx {
		for _, i := range list {
			c := &cands[i]
			keep := -int64(b2u(c.cost <= h) & b2u(c.bytes > bytes) &^ b2u(usedRx[c.v]))
			best ^= (best ^ i) & int32(keep)
			bytes ^= (bytes ^ c.bytes) & keep
		}
		return best
	}
	for _, i := range list {
		c := &cands[i]
		keep := -int64(b2u(c.cost <= h) & b2u(c.bytes > bytes) &^ b2u(usedTx[c.u]))
		best ^= (best ^ i) & int32(keep)
		bytes ^= (bytes ^ c.bytes) & keep
	}
	return best
}

// indexReset empties the walk's lists of candidates per key endpoint, giving transmitter e's list
// room for txRoom[e] candidates and receiver e's for rxRoom[e] (bounds, such as the residual
// degrees). The planner fills them while it builds the candidates, which saves the walk two passes
// over them.
func (s *selector) indexReset(txRoom, rxRoom []int) {
	head, fill := s.head[:0], s.fill[:0]
	off := int32(0)
	for _, room := range [2][]int{txRoom, rxRoom} {
		for _, r := range room {
			head, fill = append(head, off), append(fill, off)
			off += int32(r)
		}
	}
	if cap(s.items) < int(off) {
		s.items = make([]int32, off)
	}
	s.head, s.fill, s.items = head, fill, s.items[:off]
	s.indexed = true
}

// indexAdd appends candidate i to key endpoint e's list; candidates must come in increasing i.
func (s *selector) indexAdd(e, i int) {
	s.items[s.fill[e]] = int32(i)
	s.fill[e]++
}

// walkItem is one candidate in the greedy walk's heap.
type walkItem struct {
	key   float64
	bytes int64
	idx   int32
}

// before orders the walk: larger key, then more bytes, then earlier candidate.
func (a walkItem) before(b walkItem) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	if a.bytes != b.bytes {
		return a.bytes > b.bytes
	}
	return a.idx < b.idx
}

// walkHeap pops w in walk order, offering each candidate whose endpoints are free to take, until
// the heap is empty or no transmitter or no receiver of the walk is left free.
func (s *selector) walkHeap(cands []candidate, w []walkItem, m []int, take func(u, v int) bool) []int {
	txLeft, rxLeft := 0, 0
	seenTx, seenRx := s.seenTx, s.seenRx
	for i := range seenTx {
		seenTx[i], seenRx[i] = false, false
	}
	for _, it := range w {
		c := &cands[it.idx]
		if !seenTx[c.u] {
			seenTx[c.u] = true
			txLeft++
		}
		if !seenRx[c.v] {
			seenRx[c.v] = true
			rxLeft++
		}
	}
	for i := len(w)/2 - 1; i >= 0; i-- {
		siftDown(w, i)
	}
	for len(w) > 0 && txLeft > 0 && rxLeft > 0 {
		it := w[0]
		last := len(w) - 1
		w[0] = w[last]
		w = w[:last]
		siftDown(w, 0)
		c := &cands[it.idx]
		if s.usedTx[c.u] || s.usedRx[c.v] {
			continue
		}
		if take(int(c.u), int(c.v)) {
			m = append(m, int(it.idx))
			txLeft--
			rxLeft--
		}
	}
	s.walk = w
	return m
}

func siftDown(w []walkItem, i int) {
	n := len(w)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && w[r].before(w[l]) {
			j = r
		}
		if !w[j].before(w[i]) {
			return
		}
		w[i], w[j] = w[j], w[i]
		i = j
	}
}

// take adds (u, v) to the matching if the required endpoints still unmatched stay coverable by
// edges between free endpoints, repairing each side's covering matching with one augmenting path
// where (u, v) took an endpoint it used.
func (s *selector) take(u, v int) bool {
	tx, rx := s.tx, s.rx
	repair := tx.matchR[v] >= 0 && int(tx.matchR[v]) != u || rx.matchR[u] >= 0 && int(rx.matchR[u]) != v
	if repair {
		tx.snapshot(&s.snap[0])
		rx.snapshot(&s.snap[1])
	}
	s.usedTx[u], s.usedRx[v] = true, true
	tx.remove(v)
	rx.remove(u)
	// u and v are matched now: they need no covering partner any more.
	tx.unmatchLeft(u)
	rx.unmatchLeft(v)
	ok := true
	// A required transmitter that was covered through receiver v needs another receiver, and a
	// required receiver covered through transmitter u needs another transmitter.
	if l := tx.unmatchRight(v); l >= 0 {
		tx.seen.reset()
		ok = tx.augment(l)
	}
	if ok {
		if l := rx.unmatchRight(u); l >= 0 {
			rx.seen.reset()
			ok = rx.augment(l)
		}
	}
	if !ok {
		s.usedTx[u], s.usedRx[v] = false, false
		tx.free.set(v)
		rx.free.set(u)
		tx.restore(&s.snap[0])
		rx.restore(&s.snap[1])
	}
	return ok
}

// refusals says, for one key endpoint and one state of the walk, which of its candidates take
// would refuse, from two searches instead of one failed augmenting search per refused candidate.
// The walk offers a key endpoint's candidates one after another, and a refusal leaves everything
// as it was, so the refusals before a take succeeds all see the same state.
//
// For key endpoint e with matcher own (e is one of its left vertices: the transmitter side's
// matcher for a transmitter) and other (e is one of its right vertices), taking (e, p) for a
// partner p
//   - on own's side frees e's partner and takes p away from own's partner of p, l, which must
//     find another: possible exactly when l is recoverable with e's partner as an extra end;
//   - on other's side frees p's partner t and takes e away from other's partner of e, l', which
//     must find another: possible exactly when the search from l' without e reaches an exposed
//     vertex, or reaches t.
type refusals struct {
	key, epoch int
	good, ends bitset // recoverable left vertices of own
	start      int    // l' (−1: other's side needs no repair)
	any        bool   // l' reaches an exposed vertex
	reach      bitset
}

func newRefusals(n int) *refusals {
	w := (n + 63) / 64
	b := make(bitset, 3*w)
	return &refusals{key: -1, good: b[:w:w], ends: b[w : 2*w : 2*w], reach: b[2*w:]}
}

// sides are the matchers of key endpoint e: its own, the other, and e's index in both.
func (s *selector) sides(e int) (own, other *sideMatcher, x int) {
	if e < s.n {
		return s.tx, s.rx, e
	}
	return s.rx, s.tx, e - s.n
}

// classify fills r for key endpoint e in the current state.
func (s *selector) classify(r *refusals, e int) {
	own, other, x := s.sides(e)
	r.key, r.epoch = e, s.epoch
	own.recoverable(int(own.matchL[x]), other.adj, r.good, r.ends)
	r.start = int(other.matchR[x])
	r.any = r.start < 0 || other.reachFrom(r.start, x, r.reach)
}

// refuses reports whether take would refuse the key endpoint's candidate with partner p.
func (s *selector) refuses(r *refusals, p int) bool {
	own, other, x := s.sides(r.key)
	if l := int(own.matchR[p]); l >= 0 && l != x && !r.good.has(l) {
		return true
	}
	if r.any || r.start == p {
		return false
	}
	t := other.matchL[p]
	return t < 0 || !r.reach.has(int(t))
}

// offerGroup offers a group's live candidates best first (more bytes, then earlier) and appends
// those taken to m. single says they share one key endpoint, so that the first take makes the
// rest dead.
//
// Each round offers the best candidate that is live and not foreseen to be refused (refused);
// those foreseen to be refused that rank before it would have been offered, and refused, first:
// a refusal changes nothing, so they are dropped with it. Those ranking after it stay, as the take
// may change their fate. A round costs one pass over the group, and rounds are few: one per take
// and one per refusal the classification did not foresee.
func (s *selector) offerGroup(cands []candidate, buf []int32, single bool, m []int) []int {
	before := func(i, j int32) bool {
		return cands[i].bytes > cands[j].bytes || cands[i].bytes == cands[j].bytes && i < j
	}
	for len(buf) > 0 {
		k, best := 0, -1
		for _, i := range buf {
			c := &cands[i]
			if s.usedTx[c.u] || s.usedRx[c.v] {
				continue
			}
			buf[k] = i
			if (best < 0 || before(i, buf[best])) && !s.refused(c) {
				best = k
			}
			k++
		}
		buf = buf[:k]
		if best < 0 {
			break
		}
		b := buf[best]
		if s.ref.epoch == s.epoch {
			k = 0
			for _, i := range buf {
				if i == b || before(i, b) && s.refused(&cands[i]) {
					continue
				}
				buf[k] = i
				k++
			}
			buf = buf[:k]
		} else {
			buf[best] = buf[len(buf)-1]
			buf = buf[:len(buf)-1]
		}
		if s.offer(&cands[b], s.keyOf(&cands[b])) {
			m = append(m, int(b))
			if single {
				break
			}
		}
	}
	return m
}

// keyOf is a candidate's key endpoint in the walk: the one with the larger W, the transmitter on
// a tie.
func (s *selector) keyOf(c *candidate) int {
	if s.w[c.u] >= s.w[s.n+int(c.v)] {
		return int(c.u)
	}
	return s.n + int(c.v)
}

// refused reports whether the current classification foresees that take refuses c.
func (s *selector) refused(c *candidate) bool {
	r := s.ref
	if r.epoch != s.epoch || r.key < 0 {
		return false
	}
	switch r.key {
	case int(c.u):
		return s.refuses(r, int(c.v))
	case s.n + int(c.v):
		return s.refuses(r, int(c.u))
	}
	return false
}

// offer is take for the walk: it skips the candidates of a key endpoint that take would refuse,
// once one refusal has shown the endpoint to be worth classifying.
func (s *selector) offer(c *candidate, key int) bool {
	r := s.ref
	if r.key == key && r.epoch == s.epoch {
		p := int(c.u)
		if key < s.n {
			p = int(c.v)
		}
		if s.refuses(r, p) {
			return false
		}
	}
	if s.take(int(c.u), int(c.v)) {
		s.epoch++
		return true
	}
	if r.key != key || r.epoch != s.epoch {
		s.classify(r, key)
	}
	return false
}

// greedyByCost is the no-degree-coverage ablation: every candidate is in A, walked by increasing
// cost (ties by decreasing R_uv, then candidate order), taken whenever both endpoints are free.
func (s *selector) greedyByCost(cands []candidate, m []int) []int {
	for i := 0; i < s.n; i++ {
		s.usedTx[i], s.usedRx[i] = false, false
	}
	w := s.walk[:0]
	for i, c := range cands {
		w = append(w, walkItem{key: -c.cost, bytes: c.bytes, idx: int32(i)})
	}
	return s.walkHeap(cands, w, m, func(u, v int) bool {
		s.usedTx[u], s.usedRx[v] = true, true
		return true
	})
}

// sortByW returns the endpoints 0..2n−1 (len(w) = 2n) by decreasing w, ties by increasing index.
// It sorts by insertion from the order of the previous call (on the first, the index order
// newSelector leaves): W changes only at the endpoints the last matching served, and by little
// against its spread, so that order is nearly right (at n = 64, about two inversions per
// endpoint) and insertion does a few steps per endpoint, where a comparison sort did about
// log2(2n) of them, half of them mispredicted. The keys are unsigned integers in the order of
// decreasing W, moved along with their endpoints.
func (s *selector) sortByW(w []float64) []int32 {
	m := len(w)
	eps, key := s.eps[:m], s.wKey[:m]
	for i, e := range eps {
		// W is never NaN; adding 0 makes −0 equal to +0, as the comparison of floats has it.
		b := math.Float64bits(w[e] + 0)
		key[i] = ^(b ^ (uint64(int64(b)>>63) | 1<<63))
	}
	for i := 1; i < m; i++ {
		x, kx := eps[i], key[i]
		j := i
		for j > 0 && (key[j-1] > kx || key[j-1] == kx && eps[j-1] > x) {
			eps[j], key[j] = eps[j-1], key[j-1]
			j--
		}
		eps[j], key[j] = x, kx
	}
	return eps
}
