package tetris

// bestRows is bestRowsGo with the minima and maxima of the inner loop done two output ports at
// a time (SSE2, which every amd64 processor has). The table's times are never negative, −0 or
// NaN (see allPairs), and for such doubles the bit patterns order as the values do, so the
// double-precision MAXPD and MINPD pick exactly the values the integer comparisons pick.
func bestRows(row0, row1, o0, o1, c0, c1 []uint64, r00, r01, r10, r11 uint64) {
	h := len(c0)
	if h == 0 {
		return
	}
	// The bounds the assembly relies on, checked here as bestRowsGo's reslicing checks them.
	m := 2 * h
	row0, row1, o0, o1, c1 = row0[:m], row1[:m], o0[:m], o1[:m], c1[:h]
	bestRowsSSE2(&row0[0], &row1[0], &o0[0], &o1[0], &c0[0], &c1[0], h, r00, r01, r10, r11)
}

// bestRowsSSE2 is bestRowsGo on h = len(c0) input pairs, from the first elements of the slices.
//
//go:noescape
func bestRowsSSE2(row0, row1, o0, o1, c0, c1 *uint64, h int, r00, r01, r10, r11 uint64)
