package fake

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

func TestParseModel(t *testing.T) {
	m, err := ParseModel("alpha=1e-05, bandwidth=2e11,seed=7,hang-on=copy,no-ipc=true")
	if err != nil {
		t.Fatal(err)
	}
	if m.Alpha != 1e-5 || m.Bandwidth != 2e11 || m.Seed != 7 || m.HangOn != "copy" || !m.NoIPC || m.Noise != Defaults.Noise {
		t.Errorf("ParseModel = %+v", m)
	}
	back, err := ParseModel(m.String())
	if err != nil || back != m {
		t.Errorf("ParseModel(String()) = %+v, %v; want %+v", back, err, m)
	}
	if d, err := ParseModel(""); err != nil || d != Defaults {
		t.Errorf("ParseModel(\"\") = %+v, %v; want the defaults", d, err)
	}
	for _, bad := range []string{"alpha", "alpha=x", "alpha=-1", "bandwidth=0", "speed=3", "seed=-2", "outlier-factor=0.5", "spread=1"} {
		if _, err := ParseModel(bad); err == nil {
			t.Errorf("ParseModel(%q) succeeded, want error", bad)
		}
	}
}

func TestPairSpread(t *testing.T) {
	m := Defaults
	seen := map[float64]bool{}
	for s := range 8 {
		for d := range 8 {
			a, b := m.Pair(s, d)
			if math.Abs(a/m.Alpha-1) > m.Spread || math.Abs(b/m.Bandwidth-1) > m.Spread {
				t.Errorf("pair %d->%d: α %g, B %g outside ±%g of %g, %g", s, d, a, b, m.Spread, m.Alpha, m.Bandwidth)
			}
			seen[b] = true
			if a2, b2 := m.Pair(s, d); a2 != a || b2 != b {
				t.Errorf("pair %d->%d not deterministic", s, d)
			}
		}
	}
	if len(seen) < 60 {
		t.Errorf("only %d distinct bandwidths over 64 pairs", len(seen))
	}
	m.Seed = 99 // the noise seed does not change the hardware
	if a, _ := m.Pair(2, 5); a != func() float64 { a, _ := Defaults.Pair(2, 5); return a }() {
		t.Error("Pair depends on Seed")
	}
}

func TestCopyFollowsModel(t *testing.T) {
	ctx := context.Background()
	m := Defaults
	m.Alpha, m.Bandwidth = 10e-6, 100e9
	eng, err := transfer.Open(ctx, "fake", transfer.Config{Device: transfer.Device{GPU: 2}, Options: m.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	_, h, err := (&engine{dev: transfer.Device{GPU: 6}, model: m, buffers: map[int]buffer{}, next: 1}).Export(ctx, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := eng.Import(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Pair(2, 6)
	for _, n := range []int64{4 << 10, 1 << 20, 1 << 30} {
		tm, err := eng.Copy(ctx, dst, transfer.Copy{Bytes: n, Reps: 31, Kind: transfer.CE})
		times := tm.Times
		if err != nil {
			t.Fatal(err)
		}
		want := a + float64(n)/b // worked by hand from the model, not from Expected
		got := transfer.Median(times).Seconds()
		if math.Abs(got/want-1) > 0.03 {
			t.Errorf("%d bytes: median %.3gs, α+m/B = %.3gs", n, got, want)
		}
	}
	if _, err := eng.Copy(ctx, dst, transfer.Copy{Bytes: 2 << 30, Reps: 1, Kind: transfer.CE}); err == nil {
		t.Error("copy larger than the buffer succeeded")
	}
	if _, err := eng.Import(ctx, make([]byte, 64)); err == nil || !strings.Contains(err.Error(), "not a fake") {
		t.Errorf("importing a foreign handle: %v", err)
	}
	if err := eng.Free(dst); err != nil {
		t.Error(err)
	}
	if err := eng.Free(dst); err == nil {
		t.Error("double free succeeded")
	}
}

func TestOutliers(t *testing.T) {
	m := Defaults
	m.Noise, m.Outliers, m.OutlierFactor = 0, 0.2, 3
	eng, _ := open(context.Background(), transfer.Config{Options: m.String()})
	dst, _ := eng.Peer(context.Background(), transfer.Device{GPU: 1}, 1<<20)
	tm, err := eng.Copy(context.Background(), dst, transfer.Copy{Bytes: 1 << 20, Reps: 1000, Kind: transfer.SM})
	times := tm.Times
	if err != nil {
		t.Fatal(err)
	}
	base := m.Expected(0, 1, 1<<20)
	slow := 0
	for _, d := range times {
		switch {
		case d == base:
		case d >= 2*base-time.Nanosecond && d <= 3*base+time.Nanosecond:
			slow++ // factor in [1+(3-1)/2, 3]
		default:
			t.Fatalf("time %v is neither %v nor an outlier in [2,3]×", d, base)
		}
	}
	if slow < 150 || slow > 250 {
		t.Errorf("%d outliers in 1000 copies, want about 200", slow)
	}
}

// TestVerifyAndHostClock checks the two things a Copy reports besides its times: a verifying copy
// passes on a healthy engine and fails with ErrCorrupt on a corrupting one, and the host-clock span
// starts no earlier than StartAt and lasts the sum of the drawn times.
func TestVerifyAndHostClock(t *testing.T) {
	ctx := context.Background()
	for _, corrupt := range []bool{false, true} {
		m := Defaults
		m.Corrupt = corrupt
		eng, err := open(ctx, transfer.Config{Options: m.String()})
		if err != nil {
			t.Fatal(err)
		}
		dst, _ := eng.Peer(ctx, transfer.Device{GPU: 1}, 1<<20)
		at := transfer.Monotonic() + 5*time.Millisecond
		tm, err := eng.Copy(ctx, dst, transfer.Copy{Bytes: 1 << 20, Reps: 5, Kind: transfer.CE, Verify: true, StartAt: at})
		if corrupt != errors.Is(err, transfer.ErrCorrupt) {
			t.Errorf("corrupt=%v: err %v", corrupt, err)
		}
		var sum time.Duration
		for _, d := range tm.Times {
			sum += d
		}
		if tm.HostStart < at || tm.HostEnd-tm.HostStart != sum {
			t.Errorf("host span [%v, %v], StartAt %v, times sum to %v", tm.HostStart, tm.HostEnd, at, sum)
		}
	}
}

// TestPlantedKnee: past the knee the time grows at the changed bandwidth, continuously.
func TestPlantedKnee(t *testing.T) {
	m := Defaults
	m.Spread, m.KneeBytes, m.KneeFactor = 0, 1<<20, 0.5
	m2, err := ParseModel(m.String())
	if err != nil || m2 != m {
		t.Fatalf("round trip of %q: %+v, %v", m.String(), m2, err)
	}
	a, b := m.Alpha, m.Bandwidth
	if got, want := m.ExpectedSeconds(0, 1, 1<<20), a+float64(1<<20)/b; math.Abs(got-want) > 1e-15 {
		t.Errorf("at the knee: %g, want %g", got, want)
	}
	if got, want := m.ExpectedSeconds(0, 1, 3<<20), a+float64(1<<20)/b+float64(2<<20)/(b/2); math.Abs(got-want) > 1e-15 {
		t.Errorf("past the knee: %g, want %g", got, want)
	}
}

// TestContention: copies released at a shared start time run at the bandwidth divided by the
// contention factor; a pair alone does not.
func TestContention(t *testing.T) {
	m := Defaults
	m.Noise, m.Outliers, m.Contention = 0, 0, 3
	if m2, err := ParseModel(m.String()); err != nil || m2 != m {
		t.Fatalf("round trip of %q: %+v, %v", m.String(), m2, err)
	}
	eng, _ := open(context.Background(), transfer.Config{Options: m.String()})
	dst, _ := eng.Peer(context.Background(), transfer.Device{GPU: 1}, 1<<30)
	alone, _ := eng.Copy(context.Background(), dst, transfer.Copy{Bytes: 1 << 30, Reps: 1, Kind: transfer.CE})
	loaded, _ := eng.Copy(context.Background(), dst, transfer.Copy{Bytes: 1 << 30, Reps: 1, Kind: transfer.CE, StartAt: transfer.Monotonic()})
	a, bw := m.Pair(0, 1)
	if got, want := alone.Times[0].Seconds(), a+float64(1<<30)/bw; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("alone: %g s, want %g", got, want)
	}
	if got, want := loaded.Times[0].Seconds(), a+3*float64(1<<30)/bw; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("under contention: %g s, want %g", got, want)
	}
}
