package trace

import (
	"reflect"
	"strings"
	"testing"
)

func TestPlacements(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Placement
		want [][]int
	}{
		{"contiguous 8 on 8", Contiguous(8, 8), [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
		{"contiguous 6 on 4", Contiguous(6, 4), [][]int{{0}, {1}, {1}, {2}, {3}, {3}}},
		{"contiguous 2 on 4 (replicas)", Contiguous(2, 4), [][]int{{0, 1}, {2, 3}}},
		{"round-robin 6 on 4", RoundRobin(6, 4), [][]int{{0}, {1}, {2}, {3}, {0}, {1}}},
		{"round-robin 2 on 5 (replicas)", RoundRobin(2, 5), [][]int{{0, 2, 4}, {1, 3}}},
	} {
		if !reflect.DeepEqual(c.p.ExpertGPUs, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.p.ExpertGPUs, c.want)
		}
	}
	// 64 experts on 8 GPUs: 8 each, in blocks.
	p := Contiguous(64, 8)
	for e := 0; e < 64; e++ {
		if g := p.GPU(e, 0); g != e/8 {
			t.Errorf("expert %d on GPU %d, want %d", e, g, e/8)
		}
	}
	// A replicated expert serves source s from replica s mod replicas.
	p = Contiguous(2, 4)
	for s, want := range []int{0, 1, 0, 1} {
		if g := p.GPU(0, s); g != want {
			t.Errorf("expert 0 from source %d: GPU %d, want %d", s, g, want)
		}
	}
}

func TestReadPlacement(t *testing.T) {
	p, err := ReadPlacement(strings.NewReader("[1, [0, 2], 0]"), "p.json", 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{1}, {0, 2}, {0}}; !reflect.DeepEqual(p.ExpertGPUs, want) {
		t.Errorf("got %v, want %v", p.ExpertGPUs, want)
	}
	for _, c := range []struct{ in, want string }{
		{"[0, 1]", "p.json: places 2 experts, the model has 3"},
		{"[0, 1, 3]", "p.json: entry 2: GPU 3 is not in [0, 3)"},
		{`[0, 1, "x"]`, `p.json: entry 2 = "x" is neither a GPU number nor a list of them`},
		{"[0, 1, []]", "p.json: entry 2: expert 2 has no GPU"},
		{"[0, 1", "p.json: line 1: truncated file"},
	} {
		_, err := ReadPlacement(strings.NewReader(c.in), "p.json", 3, 3)
		wantErr(t, err, c.want)
	}
	if _, err := ParsePlacement("random", 8, 8); err == nil || !strings.Contains(err.Error(), `unknown placement "random"`) {
		t.Errorf("ParsePlacement(random) error = %v", err)
	}
}
