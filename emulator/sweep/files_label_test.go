package sweep

import (
	"strings"
	"testing"
)

// The completion/lower-bound plot names its bound.
func TestBoundLabelNamesTheBound(t *testing.T) {
	if !strings.Contains(BoundLabel, "load_e/b + d_e·α_r") {
		t.Errorf("BoundLabel %q does not say which bound", BoundLabel)
	}
}
