package stuffing

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestStuffHandWorked(t *testing.T) {
	tests := []struct {
		name string
		in   [][]int64
		want [][]int64
		norm int64
	}{
		{
			// Rows 5,2,2; columns 3,5,1; norm 5. Phase 1 (row-major): [0][1] and [0][2] sit in a full
			// row; [1][0] rises by min(3,2) = 2; column 0 is then full, and so is column 1, so
			// [2][0] and [2][1] stay. Phase 2: row 2 (slack 3) with column 2 (slack 4) gets 3 on the
			// diagonal; row 1 (slack 1) with column 2 (slack 1) gets the last 1.
			name: "3x3 with a stuffed diagonal",
			in:   [][]int64{{0, 4, 1}, {2, 0, 0}, {1, 1, 0}},
			want: [][]int64{{0, 4, 1}, {4, 0, 1}, {1, 1, 3}},
			norm: 5,
		},
		{
			// Rows 4,4,6,2; columns 3,4,2,7; norm 7 (column 3). Phase 1: [0][1] +3 (fills row 0 and
			// column 1), [1][0] +3 (fills row 1), [2][3] sits in a full column, [3][0] +1 (fills
			// column 0). Phase 2: row 3 (slack 4) with column 2 (slack 5) gets 4, then row 2 with
			// column 2 gets 1.
			name: "4x4",
			in:   [][]int64{{0, 3, 0, 1}, {2, 0, 2, 0}, {0, 0, 0, 6}, {1, 1, 0, 0}},
			want: [][]int64{{0, 6, 0, 1}, {5, 0, 2, 0}, {0, 0, 1, 6}, {2, 1, 4, 0}},
			norm: 7,
		},
		{
			name: "already bistochastic is unchanged",
			in:   [][]int64{{0, 2, 1}, {1, 0, 2}, {2, 1, 0}},
			want: [][]int64{{0, 2, 1}, {1, 0, 2}, {2, 1, 0}},
			norm: 3,
		},
		{
			name: "all zero stays zero",
			in:   [][]int64{{0, 0}, {0, 0}},
			want: [][]int64{{0, 0}, {0, 0}},
			norm: 0,
		},
		{name: "empty", in: [][]int64{}, want: [][]int64{}, norm: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, norm, err := Stuff(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if norm != tc.norm || !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("Stuff = %v, norm %d; want %v, norm %d", got, norm, tc.want, tc.norm)
			}
		})
	}
}

func TestStuffRejectsBadInput(t *testing.T) {
	for name, m := range map[string][][]int64{
		"ragged":   {{1, 2}, {3}},
		"negative": {{1, -2}, {3, 4}},
		"overflow": {{1 << 62, 1 << 62}, {0, 0}},
	} {
		if _, _, err := Stuff(m); err == nil {
			t.Errorf("%s matrix %v accepted", name, m)
		}
	}
}

func TestStuffProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "n")
		in := make([][]int64, n)
		for i := range in {
			in[i] = rapid.SliceOfN(rapid.Int64Range(0, 20), n, n).Draw(t, fmt.Sprintf("row%d", i))
			if rapid.Bool().Draw(t, "sparseRow") {
				for j := range in[i] {
					if rapid.Bool().Draw(t, "zero") {
						in[i][j] = 0
					}
				}
			}
		}
		orig := make([][]int64, n)
		for i := range in {
			orig[i] = slices.Clone(in[i])
		}
		out, norm, err := Stuff(in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(in, orig, slices.Equal) {
			t.Fatalf("input modified")
		}
		var wantNorm int64
		newCells := 0
		for i := range n {
			var r, c int64
			for j := range n {
				r += in[i][j]
				c += in[j][i]
				if out[i][j] < in[i][j] {
					t.Fatalf("[%d][%d] lowered from %d to %d", i, j, in[i][j], out[i][j])
				}
				if in[i][j] == 0 && out[i][j] > 0 {
					newCells++
				}
			}
			wantNorm = max(wantNorm, r, c)
		}
		if norm != wantNorm {
			t.Fatalf("norm %d, largest line sum %d", norm, wantNorm)
		}
		for i := range n {
			var r, c int64
			for j := range n {
				r += out[i][j]
				c += out[j][i]
			}
			if r != norm || c != norm {
				t.Fatalf("line %d sums to row %d, column %d; want %d (%v)", i, r, c, norm, out)
			}
		}
		if newCells > 2*n-1 {
			t.Fatalf("%d zero cells stuffed, at most 2n−1 = %d expected", newCells, 2*n-1)
		}
	})
}
