package barrier

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/stuffing"
)

// demand3 is the 3×3 example worked by hand throughout these tests. Its stuffing (norm 5, see
// package stuffing's test) is [[0 4 1] [4 0 1] [1 1 3]].
var demand3 = [][]int64{{0, 4, 1}, {2, 0, 0}, {1, 1, 0}}

func TestDecomposeHandWorked(t *testing.T) {
	stuffed3 := [][]int64{{0, 4, 1}, {4, 0, 1}, {1, 1, 3}}
	// Every line sums to 6; the ones sit on [0 2 1] and the fives on [1 0 2].
	cycle := [][]int64{{1, 5, 0}, {5, 0, 1}, {0, 1, 5}}
	threes := [][]int64{{1, 3, 1}, {3, 1, 1}, {1, 1, 3}}
	tests := []struct {
		name      string
		decompose func(context.Context, [][]int64) ([]Slice, error)
		m         [][]int64
		want      []Slice
	}{
		{
			// Hopcroft–Karp in row order takes 0→1, 1→0, 2→2 (smallest 3); the residual
			// [[0 1 1] [1 0 1] [1 1 0]] splits into its two 3-cycles.
			name: "bvn 3x3", decompose: bvnAny, m: stuffed3,
			want: []Slice{{[]int{1, 0, 2}, 3}, {[]int{1, 2, 0}, 1}, {[]int{2, 0, 1}, 1}},
		},
		{
			// Row order gives 0→0 first, so plain BvN starts with the ones.
			name: "bvn takes any matching", decompose: bvnAny, m: cycle,
			want: []Slice{{[]int{0, 2, 1}, 1}, {[]int{1, 0, 2}, 5}},
		},
		{
			// The max-min matching is the one of fives.
			name: "bvn-maxmin takes the fives first", decompose: bvnMaxMin, m: cycle,
			want: []Slice{{[]int{1, 0, 2}, 5}, {[]int{0, 2, 1}, 1}},
		},
		{
			name: "bvn-maxmin 3x3", decompose: bvnMaxMin, m: stuffed3,
			want: []Slice{{[]int{1, 0, 2}, 3}, {[]int{1, 2, 0}, 1}, {[]int{2, 0, 1}, 1}},
		},
		{
			// Largest entry 4: entries ≥ 4 are only 0→1 and 1→0, no perfect matching; at 2 the
			// matching 0→1, 1→0, 2→2 exists and runs for its smallest entry, 3. What is left is
			// all ones off the diagonal: threshold 2 fails, and at 1 the warm start keeps 0→1 and
			// 1→0, augments 2→0, 1→2 (the 3-cycle [1 2 0]), and the other 3-cycle remains.
			name: "solstice 3x3", decompose: DecomposeSolstice, m: stuffed3,
			want: []Slice{{[]int{1, 0, 2}, 3}, {[]int{1, 2, 0}, 1}, {[]int{2, 0, 1}, 1}},
		},
		{
			// Lines sum to 5. Hopcroft–Karp in row order takes the identity (smallest entry 1),
			// which breaks the threes apart: 4 slices.
			name: "bvn on threes", decompose: bvnAny, m: threes,
			want: []Slice{{[]int{0, 1, 2}, 1}, {[]int{1, 0, 2}, 2}, {[]int{1, 2, 0}, 1}, {[]int{2, 0, 1}, 1}},
		},
		{
			// Every row and column maximum is 3 and the threes form a permutation, so max-min
			// takes them whole; the ones left are two 3-cycles: 3 slices instead of 4.
			name: "bvn-maxmin on threes needs fewer slices", decompose: bvnMaxMin, m: threes,
			want: []Slice{{[]int{1, 0, 2}, 3}, {[]int{2, 1, 0}, 1}, {[]int{0, 2, 1}, 1}},
		},
		{name: "empty matrix", decompose: bvnAny, m: [][]int64{{0, 0}, {0, 0}}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.decompose(context.Background(), tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tc.want, func(a, b Slice) bool {
				return a.Duration == b.Duration && slices.Equal(a.Perm, b.Perm)
			}) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func bvnAny(ctx context.Context, m [][]int64) ([]Slice, error)    { return DecomposeBvN(ctx, m, false) }
func bvnMaxMin(ctx context.Context, m [][]int64) ([]Slice, error) { return DecomposeBvN(ctx, m, true) }

func TestDecomposeRejectsUnstuffed(t *testing.T) {
	m := [][]int64{{1, 2}, {0, 1}}
	if _, err := DecomposeBvN(context.Background(), m, false); err == nil {
		t.Error("BvN accepted a matrix with unequal line sums")
	}
	if _, err := DecomposeSolstice(context.Background(), m); err == nil {
		t.Error("Solstice accepted a matrix with unequal line sums")
	}
}

// circuitRow is the part of a circuit the hand-worked tables spell out.
type circuitRow struct {
	src, dst    int
	bytes       int64
	group       int
	start, stop float64
}

func rowsOf(s *schedules.Schedule) []circuitRow {
	var rs []circuitRow
	for _, c := range s.Circuits {
		rs = append(rs, circuitRow{c.Src, c.Dst, c.Bytes, c.Group, *c.PlannedStart, *c.PlannedEnd})
	}
	return rs
}

func TestSchedulersHandWorked(t *testing.T) {
	tests := []struct {
		name     string
		f        schedules.SchedulerFunc
		demand   [][]int64
		reconfig float64
		circuits []circuitRow
		rounds   []schedules.Round
		options  map[string]string
	}{
		{
			// Slices ([1 0 2], 3), ([1 2 0], 1), ([2 0 1], 1) of the stuffed matrix, real bytes
			// first: 0→1 has 4 real bytes, 3 in the first slice and 1 in the second; 1→0 has 2,
			// all in the first slice (its other 2 are stuffing, idle time); 2→2 is pure stuffing
			// and gets no circuit. At 1 B/s with α_r = 0.5 s on the crossbar: round 0 pays α_r
			// (nothing points anywhere yet) and lasts its stuffed 3 s; round 1 pays it because 2
			// starts pointing at 0 (0 keeps pointing at 1); round 2 because 0 re-points to 2.
			name: "bvn", f: BvN, demand: demand3, reconfig: 0.5,
			circuits: []circuitRow{
				{0, 1, 3, 0, 0.5, 3.5}, {1, 0, 2, 0, 0.5, 2.5},
				{0, 1, 1, 1, 4, 5}, {2, 0, 1, 1, 4, 5},
				{0, 2, 1, 2, 5.5, 6.5}, {2, 1, 1, 2, 5.5, 6.5},
			},
			rounds:  []schedules.Round{{Group: 0, PlannedDuration: 3}, {Group: 1, PlannedDuration: 1}, {Group: 2, PlannedDuration: 1}},
			options: map[string]string{"rounds": "3", "idle_rounds": "0", "norm_bytes": "5", "stuffed_bytes": "6"},
		},
		{
			// Threshold 4 has no perfect matching, threshold 2 has [1 0 2], which runs for its
			// smallest entry 3; the ones left are two 3-cycles at threshold 1. Here Solstice finds
			// BvN's slices; with α_r = 0 each round lasts its stuffed duration: 3, 1, 1.
			name: "solstice", f: Solstice, demand: demand3, reconfig: 0,
			circuits: []circuitRow{
				{0, 1, 3, 0, 0, 3}, {1, 0, 2, 0, 0, 2},
				{0, 1, 1, 1, 3, 4}, {2, 0, 1, 1, 3, 4},
				{0, 2, 1, 2, 4, 5}, {2, 1, 1, 2, 4, 5},
			},
			rounds:  []schedules.Round{{Group: 0, PlannedDuration: 3}, {Group: 1, PlannedDuration: 1}, {Group: 2, PlannedDuration: 1}},
			options: map[string]string{"rounds": "3", "idle_rounds": "0", "norm_bytes": "5", "stuffed_bytes": "6"},
		},
		{
			// Assignments of [[0 5 2] [3 0 0] [1 4 0]]: [1 0 2] 8, [1 2 0] 6, [2 0 1] 9, [2 1 0] 3,
			// [0 2 1] 4, [0 1 2] 0, so round 0 is 0→2, 1→0, 2→1 and lasts its longest circuit (4 s
			// after α_r). The residual 0→1 = 5, 2→0 = 1 is round 1, re-pointing 0 and 2.
			name: "maxweight", f: MaxWeight, demand: [][]int64{{0, 5, 2}, {3, 0, 0}, {1, 4, 0}}, reconfig: 1,
			circuits: []circuitRow{
				{0, 2, 2, 0, 1, 3}, {1, 0, 3, 0, 1, 4}, {2, 1, 4, 0, 1, 5},
				{0, 1, 5, 1, 6, 11}, {2, 0, 1, 1, 6, 7},
			},
			options: map[string]string{"rounds": "2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := moetest.FromRows(t, tc.demand)
			s, err := tc.f(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: tc.reconfig, Fabric: schedules.Crossbar})
			if err != nil {
				t.Fatal(err)
			}
			if got := rowsOf(s); !slices.Equal(got, tc.circuits) {
				t.Errorf("circuits (src, dst, bytes, round, start, end):\n got %v\nwant %v", got, tc.circuits)
			}
			if !slices.Equal(s.Rounds, tc.rounds) {
				t.Errorf("rounds %v, want %v", s.Rounds, tc.rounds)
			}
			for k, v := range tc.options {
				if s.Params.Options[k] != v {
					t.Errorf("option %s = %q, want %q", k, s.Params.Options[k], v)
				}
			}
			if vs := schedules.Verify(s, d); len(vs) > 0 {
				t.Error(schedules.ViolationsError(vs))
			}
		})
	}
}

// TestBenesPlacement checks the Beneš side of placement by hand on a 2-port fabric (one switch):
// 0→1 and 1→0 need it crossed, which costs α_r in the first round; the second round (0→0 and
// 1→1 would need bar, but only 0→1 is left) keeps it crossed and pays nothing.
func TestBenesPlacement(t *testing.T) {
	d := moetest.FromRows(t, [][]int64{{0, 5}, {2, 0}})
	d.CountDiagonal = false
	s, err := MaxWeight(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	want := []circuitRow{{0, 1, 5, 0, 0.25, 5.25}, {1, 0, 2, 0, 0.25, 2.25}}
	if got := rowsOf(s); !slices.Equal(got, want) {
		t.Errorf("circuits %v, want %v", got, want)
	}
	if s.N != 2 || s.Ports != 2 || s.Fabric != schedules.Benes {
		t.Errorf("header n=%d ports=%d fabric=%s, want 2, 2, benes", s.N, s.Ports, s.Fabric)
	}
	cross := benes.Traversal{Stage: 0, Switch: 0, In: 0, Out: 1}
	if p := s.Circuits[0].Path; p.Len() != 1 || p.At(0) != cross {
		t.Errorf("0→1 path %v, want [%v]", p, cross)
	}

	// Three ports pad to a 4-port fabric; BvN's rounds of demand3 route with looping.
	s, err = BvN(context.Background(), moetest.FromRows(t, demand3), schedules.Options{Bandwidth: 1, Reconfig: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 4 || s.Ports != 3 {
		t.Errorf("n=%d ports=%d, want 4 and 3", s.N, s.Ports)
	}
	if vs := schedules.Verify(s, moetest.FromRows(t, demand3)); len(vs) > 0 {
		t.Error(schedules.ViolationsError(vs))
	}
}

// TestGolden pins the whole schedule file for BvN on demand3 over a 4-port Beneš fabric.
func TestGolden(t *testing.T) {
	s, err := BvN(context.Background(), moetest.FromRows(t, demand3), schedules.Options{Bandwidth: 1e9, Reconfig: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "bvn_3x3_benes.json")
	if goldenfile.Update() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("schedule differs from %s (go test -run Golden -update to accept):\n%s", path, got)
	}
	back, err := schedules.ReadSchedule(bytes.NewReader(want), path)
	if err != nil {
		t.Fatalf("golden file does not read back: %v", err)
	}
	if vs := schedules.Verify(back, moetest.FromRows(t, demand3)); len(vs) > 0 {
		t.Error(schedules.ViolationsError(vs))
	}
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"bvn", "bvn-maxmin", "bvn-sinkhorn", "maxweight", "solstice"} {
		if _, err := schedules.Lookup(name); err != nil {
			t.Error(err)
		}
	}
}

func TestRejectsBadOptions(t *testing.T) {
	d := moetest.FromRows(t, demand3)
	for _, f := range []schedules.SchedulerFunc{BvN, BvNMaxMin, BvNSinkhorn, MaxWeight, Solstice} {
		if _, err := f(context.Background(), d, schedules.Options{Bandwidth: 0}); err == nil {
			t.Error("zero bandwidth accepted")
		}
	}
}

func TestRejectsBadDemand(t *testing.T) {
	ragged := &schedules.Demand{Bytes: [][]int64{{0, 1}, {1}}}
	negative := &schedules.Demand{Bytes: [][]int64{{0, -1}, {1, 0}}}
	// Every line fits, but three lines of MaxInt64/2 do not.
	// Built directly: the readers (DemandFromRows) refuse it already.
	huge := &schedules.Demand{Bytes: [][]int64{{0, math.MaxInt64 / 2, 0}, {math.MaxInt64 / 2, 0, 0}, {0, 0, 0}}}
	for _, f := range []schedules.SchedulerFunc{BvN, BvNMaxMin, BvNSinkhorn, MaxWeight, Solstice} {
		for name, d := range map[string]*schedules.Demand{"ragged": ragged, "negative": negative} {
			if _, err := f(context.Background(), d, schedules.Options{Bandwidth: 1}); err == nil {
				t.Errorf("%s demand accepted", name)
			}
		}
	}
	for _, f := range []schedules.SchedulerFunc{BvN, BvNMaxMin, Solstice} {
		if _, err := f(context.Background(), huge, schedules.Options{Bandwidth: 1}); err == nil {
			t.Error("a demand whose stuffed total overflows int64 was accepted")
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := moetest.Skewed(3, 8)
	for _, f := range []schedules.SchedulerFunc{BvN, BvNMaxMin, BvNSinkhorn, MaxWeight, Solstice} {
		if _, err := f(ctx, d, schedules.Options{Bandwidth: 1}); err == nil {
			t.Error("a cancelled context still produced a schedule")
		}
	}
}

// drawDemand draws a demand with up to maxN ports, sparse or dense, sometimes counting the
// diagonal.
func drawDemand(t *rapid.T, maxN int) *schedules.Demand {
	n := rapid.IntRange(1, maxN).Draw(t, "n")
	d := schedules.NewDemand(n)
	density := rapid.IntRange(0, 4).Draw(t, "density")
	for i := range n {
		for j := range n {
			if rapid.IntRange(0, 3).Draw(t, "keep") < density {
				d.Bytes[i][j] = rapid.Int64Range(1, 1000).Draw(t, "bytes")
			}
		}
	}
	d.CountDiagonal = rapid.Bool().Draw(t, "diagonal")
	return d
}

func matrixOf(t *rapid.T, d *schedules.Demand) [][]int64 {
	m, err := realMatrix(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecompositionsReconstructStuffedMatrix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := drawDemand(t, 9)
		stuffed, _, err := stuffing.Stuff(matrixOf(t, d))
		if err != nil {
			t.Fatal(err)
		}
		n := len(stuffed)
		for _, name := range []string{"bvn", "bvn-maxmin", "solstice"} {
			var sl []Slice
			switch name {
			case "bvn":
				sl, err = DecomposeBvN(context.Background(), stuffed, false)
			case "bvn-maxmin":
				sl, err = DecomposeBvN(context.Background(), stuffed, true)
			default:
				sl, err = DecomposeSolstice(context.Background(), stuffed)
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			res := clone(stuffed)
			for k, s := range sl {
				if s.Duration <= 0 {
					t.Fatalf("%s slice %d has duration %d", name, k, s.Duration)
				}
				emptied := false
				for i, j := range s.Perm {
					res[i][j] -= s.Duration
					if res[i][j] < 0 {
						t.Fatalf("%s slice %d takes %d from [%d][%d], more than is left", name, k, s.Duration, i, j)
					}
					emptied = emptied || res[i][j] == 0
				}
				if !isPerm(s.Perm, n) {
					t.Fatalf("%s slice %d: %v is not a permutation", name, k, s.Perm)
				}
				// Every slice lasts as long as its smallest matched entry, so every step empties one.
				if !emptied {
					t.Fatalf("%s slice %d (duration %d) empties no entry", name, k, s.Duration)
				}
			}
			for i := range res {
				for j := range res[i] {
					if res[i][j] != 0 {
						t.Fatalf("%s: Σ duration·permutation misses %d at [%d][%d]", name, res[i][j], i, j)
					}
				}
			}
			if name != "solstice" && n > 1 && len(sl) > n*n-2*n+2 {
				t.Fatalf("%s: %d slices, more than the n²−2n+2 = %d bound", name, len(sl), n*n-2*n+2)
			}
		}
	})
}

func isPerm(p []int, n int) bool {
	seen := make([]bool, n)
	for _, j := range p {
		if j < 0 || j >= n || seen[j] {
			return false
		}
		seen[j] = true
	}
	return len(p) == n
}

func TestSchedulesAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := drawDemand(t, 10)
		o := schedules.Options{
			Bandwidth: rapid.SampledFrom([]float64{1, 1e9, 12.5e9}).Draw(t, "bandwidth"),
			Reconfig:  rapid.SampledFrom([]float64{0, 1e-6, 1e-3, 3}).Draw(t, "reconfig"),
			Fabric:    rapid.SampledFrom([]schedules.FabricKind{"", schedules.Benes, schedules.Crossbar}).Draw(t, "fabric"),
		}
		lb := schedules.LowerBound(d, o.Bandwidth, o.Reconfig)
		for _, name := range []string{"bvn", "bvn-maxmin", "bvn-sinkhorn", "maxweight", "solstice"} {
			f, err := schedules.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := f.Schedule(context.Background(), d, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if vs := schedules.Verify(s, d); len(vs) > 0 {
				t.Fatalf("%s: %v", name, schedules.ViolationsError(vs))
			}
			checkBytes(t, name, s, d)
			checkTimes(t, name, s, o, lb)
		}
	})
}

// checkBytes is the byte-conservation property stated directly, independent of Verify.
func checkBytes(t *rapid.T, name string, s *schedules.Schedule, d *schedules.Demand) {
	n := d.N()
	sent := make([][]int64, n)
	for i := range sent {
		sent[i] = make([]int64, n)
	}
	for _, c := range s.Circuits {
		if c.Bytes <= 0 {
			t.Fatalf("%s: circuit %d→%d carries %d bytes", name, c.Src, c.Dst, c.Bytes)
		}
		sent[c.Src][c.Dst] += c.Bytes
	}
	for i := range n {
		for j := range n {
			if sent[i][j] != d.At(i, j) {
				t.Fatalf("%s: %d→%d carries %d bytes, demand %d", name, i, j, sent[i][j], d.At(i, j))
			}
		}
	}
}

// checkTimes checks the planned times against barrier semantics and the lower bounds.
func checkTimes(t *rapid.T, name string, s *schedules.Schedule, o schedules.Options, lb schedules.Bounds) {
	planned := map[int]float64{}
	for _, r := range s.Rounds {
		planned[r.Group] = r.PlannedDuration
	}
	end := 0.0
	roundEnd := map[int]float64{}
	for k, c := range s.Circuits {
		if k > 0 && c.Group < s.Circuits[k-1].Group {
			t.Fatalf("%s: circuit %d of round %d follows round %d", name, k, c.Group, s.Circuits[k-1].Group)
		}
		dur := *c.PlannedEnd - *c.PlannedStart
		if math.Abs(dur-float64(c.Bytes)/o.Bandwidth) > 1e-9*max(1, dur) {
			t.Fatalf("%s: circuit %d lasts %g for %d bytes at %g B/s", name, k, dur, c.Bytes, o.Bandwidth)
		}
		// Times are sums of float seconds: compare at the precision of the clock value.
		if pd, ok := planned[c.Group]; ok && dur > pd+1e-12*max(1, *c.PlannedEnd) {
			t.Fatalf("%s: circuit %d outlasts its round's planned %g", name, k, pd)
		}
		for g, e := range roundEnd {
			if g < c.Group && *c.PlannedStart < e-1e-9*max(1, e) {
				t.Fatalf("%s: circuit %d of round %d starts at %g before round %d ends at %g", name, k, c.Group, *c.PlannedStart, g, e)
			}
		}
		roundEnd[c.Group] = max(roundEnd[c.Group], *c.PlannedEnd)
		end = max(end, *c.PlannedEnd)
	}
	if len(s.Circuits) > 0 && end < lb.Max()*(1-1e-9) {
		t.Fatalf("%s: planned completion %g beats the lower bounds %+v", name, end, lb)
	}
	if s.Mode != schedules.Barrier {
		t.Fatalf("%s: mode %s", name, s.Mode)
	}
	if r, err := strconv.Atoi(s.Params.Options["rounds"]); err != nil || r < s.Groups() {
		t.Fatalf("%s: option rounds = %q, schedule uses %d rounds", name, s.Params.Options["rounds"], s.Groups())
	}
}

// TestSkewedDemands runs every scheduler on seeded skewed demands of several sizes, including
// sizes that need padding to a power of two, on both fabrics.
func TestSkewedDemands(t *testing.T) {
	for _, n := range []int{5, 8, 12, 24} {
		d := moetest.Skewed(uint64(n), n)
		rounds := map[string]int{}
		for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
			o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6, Fabric: fabric}
			lb := schedules.LowerBound(d, o.Bandwidth, o.Reconfig)
			for _, name := range []string{"bvn", "bvn-maxmin", "bvn-sinkhorn", "maxweight", "solstice"} {
				f, _ := schedules.Lookup(name)
				s, err := f.Schedule(context.Background(), d, o)
				if err != nil {
					t.Fatalf("n=%d %s %s: %v", n, fabric, name, err)
				}
				if vs := schedules.Verify(s, d); len(vs) > 0 {
					t.Fatalf("n=%d %s %s: %v", n, fabric, name, schedules.ViolationsError(vs))
				}
				end := 0.0
				for _, c := range s.Circuits {
					end = max(end, *c.PlannedEnd)
				}
				if end < lb.Max() {
					t.Errorf("n=%d %s %s: planned completion %g below the bound %g", n, fabric, name, end, lb.Max())
				}
				rounds[name], _ = strconv.Atoi(s.Params.Options["rounds"])
			}
		}
		// The claim for the max-min variant, on these demands.
		if rounds["bvn-maxmin"] > rounds["bvn"] {
			t.Errorf("n=%d: bvn-maxmin needs %d rounds, plain bvn %d", n, rounds["bvn-maxmin"], rounds["bvn"])
		}
		t.Logf("n=%d rounds: %v", n, rounds)
	}
}
