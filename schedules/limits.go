package schedules

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The size and magnitude limits every reader applies, so that every sum and product the model
// forms from its input is exact (or, for times, keeps its resolution) and no internal error is
// reachable from a file or a flag. The README's "Limits" section states them for users.
const (
	// MaxBytes is the largest byte count anywhere: a demand entry, a row or column load, the
	// total of one matrix, a circuit, the total of a schedule. At 2^53 every such sum fits an
	// int64 with room to spare and converts to float64 exactly, so loads, bounds and transfer
	// times never wrap or round.
	MaxBytes int64 = 1 << 53
	// MaxSeconds is the largest time anywhere: α_r, planned start, end and round durations, the
	// times of a timeline, and the drain time of a matrix (its total bytes over the bandwidth).
	// At 10^6 s (11.6 days) a float64 time still resolves 10^-10 s, far below any α_r or transfer
	// the verifier must tell apart.
	MaxSeconds = 1e6
	// MaxFabricPorts is the largest fabric size n of a schedule, on either fabric: the Beneš
	// fabric's own cap, which the crossbar shares so that a file cannot make the executor
	// allocate per-port state for ports no demand has. Demand readers have their own, lower
	// default (DefaultMaxPorts), raised with --max-ports.
	MaxFabricPorts = benes.MaxPorts
	// MaxGroup is the largest planning group (round) number in a schedule: groups number from 0
	// and may skip, and at 2^31 − 1 a count of groups (Schedule.Groups) cannot overflow.
	MaxGroup = 1<<31 - 1
)

// ErrLimit is wrapped by every error about a value above one of the limits above. It is the
// input-size limits' error too (readlimit.ErrLimit), so a file too large and a value too large
// are the same kind of refusal.
var ErrLimit = readlimit.ErrLimit

// AddBytes returns a + b, or false when the sum exceeds MaxBytes (a, b ≥ 0).
func AddBytes(a, b int64) (int64, bool) {
	s := a + b
	return s, s >= a && s <= MaxBytes
}

// MulBytes returns a · b for non-negative factors, or false when the product exceeds MaxBytes.
func MulBytes(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > uint64(MaxBytes) {
		return 0, false
	}
	return int64(lo), true
}

// CheckSeconds checks one time read from a file or a flag: finite, non-negative and at most
// MaxSeconds. field names it in the error.
func CheckSeconds(field string, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s = %g is not a finite time", field, v)
	case v < 0:
		return fmt.Errorf("%s = %g s is negative", field, v)
	case v > MaxSeconds:
		return fmt.Errorf("%s = %g s is %w of %g s (the longest time the model keeps exact)", field, v, ErrLimit, MaxSeconds)
	}
	return nil
}

// validSeconds says whether CheckSeconds accepts v, without building an error.
func validSeconds(v float64) bool { return v >= 0 && v <= MaxSeconds }

// CheckLimits checks that every load of d is within MaxBytes: the entries, and the total over
// all entries (diagonal included, so that CountDiagonal cannot push a load over). A demand that
// passes has exact row, column and total sums. The error names the first entry whose running
// total crosses the limit.
func (d *Demand) CheckLimits() error {
	var total int64
	for i, row := range d.Bytes {
		for j, v := range row {
			if v < 0 {
				return fmt.Errorf("entry [%d][%d] = %d is negative", i, j, v)
			}
			var ok bool
			if total, ok = AddBytes(total, v); !ok {
				return fmt.Errorf("entry [%d][%d] = %d brings the matrix total %w of %d bytes (2^53) that keeps every load exact",
					i, j, v, ErrLimit, MaxBytes)
			}
		}
	}
	return nil
}

// CheckHorizon checks that d drains within MaxSeconds at the options' bandwidth: its total
// bytes, and each endpoint's load plus one α_r per partner, over b. Every scheduler's plan and
// every execution of it then stays within the time range the model keeps exact.
func (o Options) CheckHorizon(d *Demand) error {
	if err := d.CheckLimits(); err != nil {
		return err
	}
	b := LowerBound(d, o.Bandwidth, o.Reconfig)
	// Serialising every circuit is the slowest any scheduler plans: total/b plus one α_r per
	// circuit. Bound that, not just the lower bound, so the upper end of time is covered too.
	pairs := 0
	for i := range d.Bytes {
		pairs += d.RowDegree(i)
	}
	worst := float64(d.Total())/o.Bandwidth + float64(pairs)*o.Reconfig
	if worst > MaxSeconds || b.Max() > MaxSeconds {
		return fmt.Errorf("the demand's total %d bytes at %g bytes/s with %d circuits × α_r = %g s may take %.3g s, %w of %g s (the longest time the model keeps exact): raise the bandwidth or scale the demand",
			d.Total(), o.Bandwidth, pairs, o.Reconfig, worst, ErrLimit, MaxSeconds)
	}
	return nil
}

// CheckScheduleHorizon is CheckHorizon for a schedule file about to be executed at the options'
// bandwidth and α_r: its bytes over b, one α_r per circuit and the planned round durations, all
// in series, must stay within MaxSeconds. (The file's own limits are Validate's.)
func (o Options) CheckScheduleHorizon(s *Schedule) error {
	var total int64
	for _, c := range s.Circuits {
		total += max(c.Bytes, 0) // Validate bounds the sum by MaxBytes
	}
	worst := float64(total)/o.Bandwidth + float64(len(s.Circuits))*o.Reconfig
	for _, r := range s.Rounds {
		worst += r.PlannedDuration
	}
	if !(worst <= MaxSeconds) {
		return fmt.Errorf("%d bytes at %g bytes/s with %d circuits × α_r = %g s may take %.3g s, %w of %g s (the longest time the model keeps exact): raise the bandwidth",
			total, o.Bandwidth, len(s.Circuits), o.Reconfig, worst, ErrLimit, MaxSeconds)
	}
	return nil
}
