package nvml

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// With CUDA_VISIBLE_DEVICES unset, CUDA ordinal k is the k-th GPU in bus order, whatever NVML's
// index order; listing all indices in reverse reverses it; listing UUIDs gives exactly those GPUs.
func TestPropertyMapOrdinals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 16).Draw(t, "n")
		buses := rapid.Permutation(makeRange(n)).Draw(t, "buses") // NVML index -> bus rank
		ids := make([]Identity, n)
		for i := range ids {
			ids[i] = Identity{Index: i, UUID: fmt.Sprintf("GPU-%04d-x", i), BusID: fmt.Sprintf("00000000:%02x:00.0", 0x10+buses[i])}
		}
		all, err := MapOrdinals(nil, ids)
		if err != nil {
			t.Fatal(err)
		}
		for ord, idx := range all {
			if buses[idx] != ord {
				t.Fatalf("ordinal %d is NVML %d on bus rank %d", ord, idx, buses[idx])
			}
		}
		var rev []string
		for k := n - 1; k >= 0; k-- {
			rev = append(rev, fmt.Sprint(k))
		}
		v := strings.Join(rev, ",")
		got, err := MapOrdinals(&v, ids)
		if err != nil || !slices.Equal(got, reversed(all)) {
			t.Fatalf("%q: %v, %v; want %v", v, got, err, reversed(all))
		}
		pick := rapid.SliceOfNDistinct(rapid.IntRange(0, n-1), 1, n, rapid.ID[int]).Draw(t, "pick")
		var uu []string
		for _, i := range pick {
			uu = append(uu, ids[i].UUID)
		}
		v = strings.Join(uu, ",")
		if got, err := MapOrdinals(&v, ids); err != nil || !slices.Equal(got, pick) {
			t.Fatalf("%q: %v, %v; want %v", v, got, err, pick)
		}
	})
}

func makeRange(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func reversed(s []int) []int {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
