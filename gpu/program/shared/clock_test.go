package shared

import (
	"testing"

	"pgregory.net/rapid"
)

// Whatever the delays around the device read (asymmetric, jittery), the true offset lies
// within the reported uncertainty, and the uncertainty is half the least round trip.
func TestMeasureOffsetBoundsTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		truth := rapid.Int64Range(-1e12, 1e12).Draw(t, "offset")
		n := rapid.IntRange(1, 20).Draw(t, "samples")
		now := int64(1e9)
		var pre, post []int64
		for i := range n {
			pre = append(pre, rapid.Int64Range(0, 50000).Draw(t, "pre"+string(rune('a'+i))))
			post = append(post, rapid.Int64Range(0, 50000).Draw(t, "post"+string(rune('a'+i))))
		}
		i, phase := 0, 0
		host := func() int64 {
			if phase == 1 {
				now += post[i]
				i++
			}
			phase ^= 1
			return now
		}
		probe := func() (int64, error) {
			now += pre[i]
			return now - truth, nil // device clock = host − truth
		}
		o, err := MeasureOffset(n, host, probe)
		if err != nil {
			t.Fatal(err)
		}
		minRTT := int64(1 << 62)
		for k := range n {
			minRTT = min(minRTT, pre[k]+post[k])
		}
		if o.MinRTTNS != minRTT || o.UncertaintyNS < minRTT/2 || o.UncertaintyNS > minRTT/2+1 {
			t.Fatalf("min RTT %d, uncertainty %d; want %d, %d", o.MinRTTNS, o.UncertaintyNS, minRTT, minRTT/2)
		}
		if d := o.OffsetNS - truth; d < -o.UncertaintyNS || d > o.UncertaintyNS {
			t.Fatalf("offset %d, truth %d, uncertainty %d", o.OffsetNS, truth, o.UncertaintyNS)
		}
	})
}
