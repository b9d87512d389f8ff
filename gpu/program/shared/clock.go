package shared

import (
	"errors"
	"fmt"
	"math"
)

// Offset is one device clock's offset from CLOCK_MONOTONIC, as measured at a run's start:
// host = device + OffsetNS, within ±UncertaintyNS. Every worker measures its own device against
// CLOCK_MONOTONIC, which every process of the machine shares, so the offsets put all devices on
// one clock; between two devices the uncertainty is the sum of theirs.
type Offset struct {
	Worker int `json:"worker"`
	// GPU names the worker's device where the caller knows it (−1: not set).
	GPU           int   `json:"gpu"`
	OffsetNS      int64 `json:"offset_ns"`
	UncertaintyNS int64 `json:"uncertainty_ns"`
	// Samples round trips were made; the one of least round-trip time gave the offset.
	Samples  int   `json:"samples"`
	MinRTTNS int64 `json:"min_rtt_ns"`
}

// MeasureOffset estimates host − device from n round trips: each reads host, then the device
// (probe, e.g. a stamp kernel's %globaltimer), then host again. The device read happened
// between the two host reads, so device − midpoint is off by at most half the round trip; the
// sample with the least round trip is the tightest and is the one taken.
func MeasureOffset(n int, host func() int64, probe func() (int64, error)) (Offset, error) {
	if n < 1 || host == nil || probe == nil {
		return Offset{}, errors.New("shared: a clock offset needs a host clock, a probe and at least one sample")
	}
	best := Offset{GPU: -1, Samples: n, MinRTTNS: math.MaxInt64}
	for i := range n {
		before := host()
		dev, err := probe()
		after := host()
		if err != nil {
			return Offset{}, fmt.Errorf("shared: clock probe %d of %d: %w", i+1, n, err)
		}
		if rtt := after - before; rtt >= 0 && rtt < best.MinRTTNS {
			best.MinRTTNS = rtt
			best.OffsetNS = before + rtt/2 - dev
			best.UncertaintyNS = rtt - rtt/2 // the rounding of rtt/2 counts against us
		}
	}
	if best.MinRTTNS == math.MaxInt64 {
		return Offset{}, errors.New("shared: the host clock ran backwards in every sample")
	}
	return best, nil
}
