package synth

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// hidden × dtype bytes beyond the byte limit is refused; it used to wrap to an all-zero trace.
func TestGenerateRefusesByteOverflow(t *testing.T) {
	for _, hidden := range []int{1 << 62, 1 << 40} {
		m := Model{Name: "custom", Hidden: hidden, Experts: 8, TopK: 2, Layers: 1}
		_, err := Generate(Config{Model: m, GPUs: 8, TokensPerGPU: 2048, Seed: 1, DtypeBytes: 4})
		if !errors.Is(err, schedules.ErrLimit) || !strings.Contains(err.Error(), "× dtype bytes = 4 × 8 GPUs × 2048 tokens × top-2 is above the limit of 9007199254740992 bytes") {
			t.Errorf("hidden %d: %v, want the byte limit", hidden, err)
		}
	}
	m := Model{Name: "custom", Hidden: 1 << 30, Experts: 8, TopK: 2, Layers: 1}
	if _, err := Generate(Config{Model: m, GPUs: 8, TokensPerGPU: 2048, Seed: 1, DtypeBytes: 4}); err != nil {
		t.Errorf("2^30 hidden (2^47 bytes per matrix) refused: %v", err)
	}
}
