//go:build !amd64

package tetris

// bestRows is bestRowsGo where there is no assembly version.
func bestRows(row0, row1, o0, o1, c0, c1 []uint64, r00, r01, r10, r11 uint64) {
	bestRowsGo(row0, row1, o0, o1, c0, c1, r00, r01, r10, r11)
}
