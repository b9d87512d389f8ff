package main

import (
	"path/filepath"
	"testing"
)

// TestTraceGenExpertPerGPU: --expert-per-gpu on 16 GPUs makes every GPU send to every other
// (degree 15); without it the preset's 8 experts keep the degree at 7.
func TestTraceGenExpertPerGPU(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		flag []string
		want int
	}{{nil, 7}, {[]string{"--expert-per-gpu"}, 15}} {
		out := filepath.Join(dir, "t.json")
		mustCLI(t, append([]string{"trace", "gen", "--model", "mixtral-8x22b", "--gpus", "16", "--tokens-per-gpu", "600", "--layers", "1", "-o", out}, c.flag...)...)
		tr := loadTrace(t, out)
		for _, m := range tr.Matrices {
			if got := m.Demand().MaxDegree(); got != c.want {
				t.Errorf("%v: %s has maximum degree %d, want %d", c.flag, m.Label(), got, c.want)
			}
		}
	}
}
