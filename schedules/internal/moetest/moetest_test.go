package moetest

import "testing"

func TestDemandIsSeededAndSkewed(t *testing.T) {
	a, b := Skewed(1, 16), Skewed(1, 16)
	for i := range a.Bytes {
		for j := range a.Bytes[i] {
			if a.Bytes[i][j] != b.Bytes[i][j] {
				t.Fatalf("same seed, different matrices at [%d][%d]", i, j)
			}
			if i == j && a.Bytes[i][j] != 0 {
				t.Fatalf("diagonal [%d][%d] = %d", i, j, a.Bytes[i][j])
			}
			if i != j && (a.Bytes[i][j] <= 0 || a.Bytes[i][j]%TokenBytes != 0) {
				t.Fatalf("[%d][%d] = %d is not a positive number of tokens", i, j, a.Bytes[i][j])
			}
		}
	}
	// Zipf exponent 1 over 16 receivers: the hottest takes far more than the mean.
	if s := a.Statistics(); s.ReceiverSkew < 2 {
		t.Errorf("receiver max/mean %.2f: not skewed", s.ReceiverSkew)
	}
	if c := Skewed(2, 16); c.Bytes[0][1] == a.Bytes[0][1] && c.Bytes[1][0] == a.Bytes[1][0] {
		t.Error("different seeds gave the same entries")
	}
	if sparse := Demand(1, 16, 1, 0.5); sparse.Statistics().NonzeroPairs > 200 {
		t.Errorf("sparse 0.5 kept %d of 240 pairs", sparse.Statistics().NonzeroPairs)
	}
}
