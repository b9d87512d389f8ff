package trace

import (
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Summary describes one matrix the way Tetris §2.2 looks at it: loads, bottleneck endpoints,
// degree, skew, and the two lower bounds on completion time.
type Summary struct {
	Index   int
	Label   string
	Stats   schedules.Stats
	Bounds  schedules.Bounds
	MaxLoad int64 // max(MaxRowLoad, MaxColLoad): the bottleneck endpoints' load
}

// Summarize computes a Summary per matrix at per-port bandwidth (bytes/s) and reconfiguration
// delay alphaR (s). Local (diagonal) traffic is ignored, as on a GPU server.
func (t *Trace) Summarize(bandwidth, alphaR float64) []Summary {
	out := make([]Summary, len(t.Matrices))
	for k := range t.Matrices {
		d := t.Matrices[k].Demand()
		st := d.Statistics()
		out[k] = Summary{Index: k, Label: t.Matrices[k].Label(), Stats: st,
			Bounds: schedules.LowerBound(d, bandwidth, alphaR), MaxLoad: max(st.MaxRowLoad, st.MaxColLoad)}
	}
	return out
}
