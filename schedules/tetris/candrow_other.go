//go:build !amd64

package tetris

// candRow is candRowGo where there is no assembly version.
func candRow(src, dst []candidate, row []uint64, wRx []float64, items, rxFill []int32,
	txRow, rxCol []uint64, words int, uMask uint64, u, base int32, wub uint64, txFill int32, alpha, b float64) (int, int32) {
	return candRowGo(src, dst, row, wRx, items, rxFill, txRow, rxCol, words, uMask, u, base, wub, txFill, alpha, b)
}
