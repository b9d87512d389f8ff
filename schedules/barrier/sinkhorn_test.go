package barrier

import (
	"context"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// A 3×3 demand with an empty diagonal has exactly two perfect matchings on its support, the two
// 3-cycles, so its Sinkhorn scaling is x·C1 + (1−x)·C2 and every pair lies in one slice only: all
// of its bytes go there. At 1 B/s on the crossbar with α_r = 0.5 s: the cycle {0→1 4 B, 1→2 3 B,
// 2→0 5 B} lasts 5 s, the cycle {0→2 2 B, 1→0 4 B, 2→1 1 B} lasts 4 s, each after a re-pointing:
// 0.5 + 5 + 0.5 + 4 = 10 s whichever comes first.
func TestBvNSinkhornHandWorked(t *testing.T) {
	d := moetest.FromRows(t, [][]int64{{0, 4, 2}, {4, 0, 3}, {5, 1, 0}})
	s, err := BvNSinkhorn(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 0.5, Fabric: schedules.Crossbar})
	if err != nil {
		t.Fatal(err)
	}
	if vs := schedules.Verify(s, d); len(vs) > 0 {
		t.Fatal(schedules.ViolationsError(vs))
	}
	rounds := map[int][][3]int64{}
	end := 0.0
	for _, c := range s.Circuits {
		rounds[c.Group] = append(rounds[c.Group], [3]int64{int64(c.Src), int64(c.Dst), c.Bytes})
		end = max(end, *c.PlannedEnd)
	}
	a := [][3]int64{{0, 1, 4}, {1, 2, 3}, {2, 0, 5}}
	b := [][3]int64{{0, 2, 2}, {1, 0, 4}, {2, 1, 1}}
	if len(rounds) != 2 || !(slices.Equal(rounds[0], a) && slices.Equal(rounds[1], b) || slices.Equal(rounds[0], b) && slices.Equal(rounds[1], a)) {
		t.Errorf("rounds %v, want the two 3-cycles %v and %v", rounds, a, b)
	}
	if end != 10 {
		t.Errorf("planned completion %g s, want 10 s", end)
	}
	// Rounding to integer units leaves a few units short, which stuffing makes up; a slice of
	// those units alone carries no byte and is dropped rather than executed.
	if s.Params.Options["rounds"] != "2" || s.Params.Options["slices"] == "" {
		t.Errorf("options %v, want 2 rounds", s.Params.Options)
	}
}

// TestSinkhornConverges: on positive matrices with entries within a factor 1000 of each other the
// scaling is doubly stochastic to 1e-11 within the iteration cap and keeps the support (far more
// skewed matrices converge slowly, which the stuffing repair absorbs); a matrix with an idle port
// stops at the cap without inventing entries.
func TestSinkhornConverges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		m := make([][]int64, n)
		for i := range m {
			m[i] = make([]int64, n)
			for j := range m[i] {
				m[i][j] = rapid.Int64Range(1, 1000).Draw(t, "entry")
			}
		}
		p, _ := sinkhorn(m)
		for i := range n {
			var r, c float64
			for j := range n {
				if !(p[i][j] > 0) {
					t.Fatalf("entry [%d][%d] = %g lost its support", i, j, p[i][j])
				}
				r += p[i][j]
				c += p[j][i]
			}
			if math.Abs(r-1) > 1e-11 || math.Abs(c-1) > 1e-11 {
				t.Fatalf("line %d sums to %g (row) and %g (column)", i, r, c)
			}
		}
	})
	p, iters := sinkhorn([][]int64{{0, 5}, {0, 3}}) // column 0 and hence row sums cannot both be 1
	if iters != sinkhornMaxIter || p[0][0] != 0 || p[1][0] != 0 {
		t.Errorf("idle column: %d iterations, p = %v", iters, p)
	}
}

// TestShareAddsUp: the cumulative shares of a pair's bytes over any split of its units are
// integers that add up to the pair's bytes exactly, at sizes where d·c overflows 64 bits.
func TestShareAddsUp(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.Int64Range(0, 1<<50).Draw(t, "bytes")
		parts := rapid.SliceOfN(rapid.Int64Range(1, SinkhornScale), 1, 20).Draw(t, "units")
		var p int64
		for _, x := range parts {
			p += x
		}
		var c, sum, prev int64
		for _, x := range parts {
			c += x
			s := share(d, c, p)
			if s < prev {
				t.Fatalf("share went down from %d to %d", prev, s)
			}
			sum += s - prev
			prev = s
		}
		if sum != d {
			t.Fatalf("shares add up to %d, want %d", sum, d)
		}
	})
}
