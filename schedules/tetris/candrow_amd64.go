package tetris

import "fmt"

// candRow is candRowGo with the row loop in assembly (candrow_amd64.s). What the loop indexes by
// a demand's receiver v (row, wRx, rxFill, rxCol) is in bounds because every live demand has
// v < n = len(wRx), and what it indexes by a fill position (items) because an endpoint's room is
// its residual degree (see candidates); the bounds that do not depend on the demands are checked
// here, as candRowGo's indexing checks them.
func candRow(src, dst []candidate, row []uint64, wRx []float64, items, rxFill []int32,
	txRow, rxCol []uint64, words int, uMask uint64, u, base int32, wub uint64, txFill int32, alpha, b float64) (int, int32) {
	n := len(wRx)
	if len(src) == 0 {
		// candRowGo still ORs an empty word into txRow[0].
		txRow[0] |= 0
		return 0, txFill
	}
	if len(dst) < len(src) || len(row) < n || len(rxFill) < n || len(txRow) < (n+63)/64 ||
		words < 1 || len(rxCol) < (n-1)*words+1 || int(txFill)+len(src) > len(items) || txFill < 0 {
		// The planner sizes these from n; a mismatch is a bug in it, reported as candRowGo would.
		panic(fmt.Sprintf("tetris: candRow buffers do not fit n = %d (dst %d/%d, row %d, rxFill %d, txRow %d, rxCol %d·%d, items %d from %d)",
			n, len(dst), len(src), len(row), len(rxFill), len(txRow), len(rxCol), words, len(items), txFill))
	}
	k, fill := candRowAsm(&src[0], len(src), &dst[0], &row[0], &wRx[0], &items[0], &rxFill[0], &txRow[0], &rxCol[0],
		uintptr(words)*8, uMask, int(base), wub, int(txFill), alpha, b, int(u))
	return k, int32(fill)
}

// candRowAsm is candRowGo on the cnt demands from src, with words given in bytes (stride).
//
//go:noescape
func candRowAsm(src *candidate, cnt int, dst *candidate, row *uint64, wRx *float64, items, rxFill *int32,
	txRow, rxCol *uint64, stride uintptr, uMask uint64, base int, wub uint64, txFill int, alpha, b float64, u int) (k, fill int)
