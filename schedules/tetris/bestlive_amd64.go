package tetris

// bestLive is bestLiveGo with its scan in assembly (bestlive_amd64.s), the choice kept with
// conditional moves. The list holds candidates of this iteration (indices into cands) and their
// endpoints are ports of the demand (indices into usedTx and usedRx), as bestLiveGo's indexing
// checks.
func bestLive(cands []candidate, list []int32, h float64, tx bool, usedTx, usedRx []bool) int32 {
	if len(list) == 0 {
		return -1
	}
	// The partner whose use is checked: the receiver (v, at offset 4) when the key endpoint is
	// the transmitter, else the transmitter (u, at offset 0).
	used, field := usedTx, uintptr(0)
	if tx {
		used, field = usedRx, 4
	}
	return bestLiveAsm(&cands[0], &list[0], len(list), h, &used[0], field)
}

// bestLiveAsm is bestLiveGo over the cnt candidates of list, with the partner's port read at
// byte offset field of a candidate and its use in used.
//
//go:noescape
func bestLiveAsm(cands *candidate, list *int32, cnt int, h float64, used *bool, field uintptr) int32
