package plot

import "testing"

// No two major ticks of a distribution's axis read the same, whatever the range.
func TestDistinctTicks(t *testing.T) {
	for _, r := range [][2]float64{{0.95, 1.15}, {1, 1.16}, {0.999, 1.003}, {1, 5}, {0.5, 120}} {
		seen := map[string]float64{}
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			if v, ok := seen[tk.Label]; ok {
				t.Errorf("range %v: ticks %g and %g both read %q", r, v, tk.Value, tk.Label)
			}
			seen[tk.Label] = tk.Value
		}
	}
}
