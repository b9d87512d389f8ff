package trace

import (
	"math"
	"reflect"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// A hand-worked matrix: receiver 2 is the bottleneck.
//
//	      Rx0 Rx1 Rx2   row load (diagonal ignored)
//	Tx0  [ 9,  1,  6]   7
//	Tx1  [ 2,  0,  4]   6
//	Tx2  [ 0,  1,  9]   1
//	col:   2   2  10    total 14
//
// At b = 2 B/s and α_r = 1 s: T_min = 10/2 = 5 s; Rx2 has 2 partners, each reached after a
// switch change, so 5 + 2 = 7 s.
func TestSummarizeHandWorked(t *testing.T) {
	tr := &Trace{Version: Version, Meta: Meta{GPUs: 3}, Matrices: []Matrix{{Phase: Dispatch, Bytes: [][]int64{{9, 1, 6}, {2, 0, 4}, {0, 1, 9}}}}}
	s := tr.Summarize(2, 1)[0]
	if s.Stats.Total != 14 || s.Stats.MaxRowLoad != 7 || s.Stats.MaxColLoad != 10 || s.MaxLoad != 10 {
		t.Errorf("total %d max row %d max col %d max %d, want 14 7 10 10", s.Stats.Total, s.Stats.MaxRowLoad, s.Stats.MaxColLoad, s.MaxLoad)
	}
	if want := []schedules.Endpoint{{Port: 2, Rx: true}}; !reflect.DeepEqual(s.Stats.Bottlenecks, want) {
		t.Errorf("bottlenecks %v, want %v", s.Stats.Bottlenecks, want)
	}
	if s.Bounds.Bandwidth != 5 || s.Bounds.Reconfig != 7 {
		t.Errorf("bounds %+v, want 5 and 7", s.Bounds)
	}
	if want := 10 / (14.0 / 3); math.Abs(s.Stats.ReceiverSkew-want) > 1e-12 {
		t.Errorf("receiver skew %v, want %v", s.Stats.ReceiverSkew, want)
	}
	if s.Label != "layer 0 dispatch" {
		t.Errorf("label %q", s.Label)
	}
}
