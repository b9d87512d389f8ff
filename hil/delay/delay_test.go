package delay

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestWaitNeverEarly(t *testing.T) {
	// Correctness, not timing: a wait never returns before its deadline, whichever path (spin
	// only, sleep then spin, never sleep) it takes.
	for _, in := range []Injector{{}, {SleepThreshold: -1}, {SleepThreshold: 100 * time.Microsecond}} {
		for _, d := range []time.Duration{0, time.Nanosecond, 5 * time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond} {
			deadline := time.Now().Add(d)
			woke, err := in.WaitUntil(context.Background(), deadline)
			if err != nil {
				t.Fatal(err)
			}
			if woke.Before(deadline) {
				t.Errorf("threshold %v, delay %v: woke %v before the deadline", in.SleepThreshold, d, deadline.Sub(woke))
			}
		}
	}
}

func TestWaitCancelled(t *testing.T) {
	for _, th := range []time.Duration{0, -1} {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		start := time.Now()
		_, err := Injector{SleepThreshold: th}.Wait(ctx, time.Hour)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("threshold %v: err = %v, want context.Canceled", th, err)
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("threshold %v: a cancelled hour-long wait took %v", th, time.Since(start))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Injector{}).Wait(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("already cancelled: %v", err)
	}
}

func TestSummarise(t *testing.T) {
	var xs []time.Duration
	for i := 200; i >= 1; i-- {
		xs = append(xs, time.Duration(i))
	}
	s := Summarise(time.Microsecond, xs)
	if s.Samples != 200 || s.Median != 101 || s.P99 != 199 || s.Worst != 200 {
		t.Errorf("Summarise = %+v, want median 101, p99 199, worst 200 of 200", s)
	}
	if s := Summarise(0, []time.Duration{7}); s.Median != 7 || s.P99 != 7 || s.Worst != 7 {
		t.Errorf("one sample: %+v", s)
	}
	if s := Summarise(0, nil); s.Samples != 0 {
		t.Errorf("no samples: %+v", s)
	}
}

func TestSelfTestShape(t *testing.T) {
	calls := 0
	st, err := Injector{}.SelfTest(context.Background(), []time.Duration{10 * time.Nanosecond, 2 * time.Microsecond}, 50, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || calls != 2 || st[0].Samples != 50 || st[1].Requested != 2*time.Microsecond {
		t.Errorf("SelfTest = %+v, %d progress calls", st, calls)
	}
	for _, s := range st {
		if s.Median < 0 || s.P99 < s.Median || s.Worst < s.P99 {
			t.Errorf("inconsistent stats %+v", s)
		}
	}
	if _, err := (Injector{}).SelfTest(context.Background(), SelfTestDelays, 0, nil); err == nil {
		t.Error("0 repetitions accepted")
	}
}

// BenchmarkInject reports the lateness of injected delays as metrics (median and p99 in ns): the
// figure the live replay's accuracy rests on. Run with -benchtime 2000x for stable tails.
func BenchmarkInject(b *testing.B) {
	for _, d := range []time.Duration{10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
		b.Run(fmt.Sprint(d), func(b *testing.B) {
			late := make([]time.Duration, 0, b.N)
			var in Injector
			for i := 0; i < b.N; i++ {
				deadline := time.Now().Add(d)
				woke, _ := in.WaitUntil(context.Background(), deadline)
				late = append(late, woke.Sub(deadline))
			}
			s := Summarise(d, late)
			b.ReportMetric(float64(s.Median.Nanoseconds()), "median-late-ns")
			b.ReportMetric(float64(s.P99.Nanoseconds()), "p99-late-ns")
		})
	}
}

func ExampleInjector_SelfTest() {
	st, err := Injector{}.SelfTest(context.Background(), []time.Duration{10 * time.Microsecond}, 100, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st[0].Requested, st[0].Samples, st[0].Median >= 0)
	// Output: 10µs 100 true
}

func TestAwait(t *testing.T) {
	ctx := context.Background()
	for _, in := range []Injector{{}, {SleepThreshold: -1}, {SleepThreshold: 100 * time.Microsecond}} {
		// Nothing arrives: it returns at the deadline, never before.
		ch := make(chan int, 1)
		deadline := time.Now().Add(3 * time.Millisecond)
		_, got, woke, err := Await(ctx, in, deadline, ch)
		if err != nil || got || woke.Before(deadline) {
			t.Errorf("threshold %v, nothing sent: got %v, err %v, woke %v before the deadline", in.SleepThreshold, got, err, deadline.Sub(woke))
		}
		// A value waiting is taken at once, however far the deadline.
		ch <- 7
		v, got, _, err := Await(ctx, in, time.Now().Add(time.Hour), ch)
		if err != nil || !got || v != 7 {
			t.Errorf("threshold %v, value sent: v %d, got %v, err %v", in.SleepThreshold, v, got, err)
		}
		// A value sent during the wait ends it.
		go func() { time.Sleep(5 * time.Millisecond); ch <- 8 }()
		start := time.Now()
		v, got, _, err = Await(ctx, in, time.Now().Add(time.Hour), ch)
		if err != nil || !got || v != 8 || time.Since(start) > 10*time.Second {
			t.Errorf("threshold %v, value sent later: v %d, got %v, err %v after %v", in.SleepThreshold, v, got, err, time.Since(start))
		}
	}
	// No deadline: only the channel or the context ends it.
	ctx2, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, got, _, err := Await(ctx2, Injector{}, time.Time{}, make(chan int)); got || !errors.Is(err, context.Canceled) {
		t.Errorf("no deadline, cancelled: got %v, err %v", got, err)
	}
}
