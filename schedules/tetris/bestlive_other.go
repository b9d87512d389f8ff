//go:build !amd64

package tetris

// bestLive is bestLiveGo where there is no assembly version.
func bestLive(cands []candidate, list []int32, h float64, tx bool, usedTx, usedRx []bool) int32 {
	return bestLiveGo(cands, list, h, tx, usedTx, usedRx)
}
