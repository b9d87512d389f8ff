package trace_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/trace"
	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

// The embedded default trace is exactly what synth.DefaultTrace makes (go generate rewrites it).
func TestDefaultTraceIsCurrent(t *testing.T) {
	want, err := synth.DefaultTrace()
	if err != nil {
		t.Fatal(err)
	}
	b, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("default_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, file) {
		t.Fatal("default_trace.json is stale: run go generate ./schedules/trace")
	}
}

func TestDefaultTrace(t *testing.T) {
	tr, err := trace.Default()
	if err != nil {
		t.Fatal(err)
	}
	if tr.N() != 8 || len(tr.Matrices) != 30 || tr.Meta.Model != "mixtral-8x7b" {
		t.Fatalf("n %d, %d matrices, model %q; want 8, 30, mixtral-8x7b", tr.N(), len(tr.Matrices), tr.Meta.Model)
	}
	if tr.Meta.License == "" || !bytes.Contains([]byte(tr.Meta.License), []byte("Apache-2.0")) {
		t.Errorf("licence %q does not carry the Apache-2.0 attribution", tr.Meta.License)
	}
	// Every layer's receivers take exactly the measured counts, scaled to 8 × 2048 × 2 routings,
	// times hidden × dtype: expert e lives on GPU e.
	counts, err := synth.RealCounts()
	if err != nil {
		t.Fatal(err)
	}
	unit := int64(4096 * 2)
	for _, m := range tr.Matrices {
		if m.Phase != trace.Dispatch {
			continue
		}
		want := synth.ScaleCounts(counts.Counts["mixtral-8x7b"][m.Dataset][layerKey(m.Layer)], 8*2048*2)
		for j := 0; j < 8; j++ {
			var col int64
			for i := 0; i < 8; i++ {
				col += m.Bytes[i][j]
			}
			if col != want[j]*unit {
				t.Errorf("%s: receiver %d takes %d bytes, want %d routings × %d", m.Label(), j, col, want[j], unit)
			}
		}
	}
}

func layerKey(l int) string {
	return map[int]string{0: "layer0", 7: "layer7", 15: "layer15"}[l]
}

func ExampleDefault() {
	tr, _ := trace.Default()
	fmt.Println(tr.N(), "GPUs,", len(tr.Matrices), "matrices")
	s := tr.Summarize(100e9, 10e-6)[0] // 800 Gbps, α_r = 10 µs
	fmt.Printf("%s: bottleneck %v, receiver max/mean %.2f\n", s.Label, s.Stats.Bottlenecks, s.Stats.ReceiverSkew)
	// Output:
	// 8 GPUs, 30 matrices
	// layer 0 dispatch (arxiv): bottleneck [Rx5], receiver max/mean 1.27
}
