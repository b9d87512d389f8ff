package sweep

import (
	"strings"
	"testing"
)

// The completion/lower-bound plot names its bound, the larger of the two, without spelling the
// bandwidth model's load/b (the bound follows the run's transfer model), in few enough
// characters to read along the plot's 300-point axis.
func TestBoundLabelNamesTheBound(t *testing.T) {
	if !strings.Contains(BoundLabel, "max(bandwidth, reconfig bound)") || strings.Contains(BoundLabel, "/b") || len([]rune(BoundLabel)) > 45 {
		t.Errorf("BoundLabel %q does not name the larger of both bounds in at most 45 characters", BoundLabel)
	}
}
