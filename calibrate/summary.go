package calibrate

import (
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// Summarize is the median and spread of one size's timed copies (warm-ups already discarded by
// the engine).
func Summarize(bytes int64, times []time.Duration) model.Median {
	m := model.Median{Bytes: bytes, Repetitions: len(times)}
	if len(times) == 0 {
		return m
	}
	s := make([]float64, len(times))
	for i, d := range times {
		s[i] = d.Seconds()
	}
	slices.Sort(s)
	m.Seconds = median(slices.Clone(s))
	m.P25 = stat.Quantile(0.25, stat.Empirical, s, nil)
	m.P75 = stat.Quantile(0.75, stat.Empirical, s, nil)
	m.Min, m.Max = s[0], s[len(s)-1]
	return m
}

func fmtBytes(n int64) string { return units.FormatBinary(n) }
