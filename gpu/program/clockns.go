package program

import "math"

// NotBeforeNS is the earliest whole nanosecond, counted from a run's start, that reads back as
// sec or later when stamps are turned into seconds (float64(ns)·1e-9, as the executors do). A
// signal released at the truncated value of sec·1e9 lets a circuit start up to a nanosecond
// before the switch change it waits for has ended, which the timeline check rightly calls an
// overlap; rounding up here keeps every release at or after the modelled end.
func NotBeforeNS(sec float64) int64 {
	if !(sec > 0) {
		return 0
	}
	ns := int64(math.Ceil(sec * 1e9))
	for ns > 0 && float64(ns-1)*1e-9 >= sec {
		ns--
	}
	for float64(ns)*1e-9 < sec {
		ns++
	}
	return ns
}
