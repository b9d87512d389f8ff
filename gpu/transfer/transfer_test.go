package transfer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseKind(t *testing.T) {
	for _, s := range []string{"ce", "sm"} {
		if k, err := ParseKind(s); err != nil || string(k) != s {
			t.Errorf("ParseKind(%q) = %q, %v", s, k, err)
		}
	}
	if _, err := ParseKind("dma"); err == nil || !strings.Contains(err.Error(), `"dma"`) {
		t.Errorf("ParseKind(dma) = %v, want an error naming the value", err)
	}
}

func TestCopyValidate(t *testing.T) {
	tests := []struct {
		c  Copy
		ok bool
	}{
		{Copy{Bytes: 4096, Reps: 1, Kind: CE}, true},
		{Copy{Bytes: 4096, Reps: 5, Warmup: 2, Kind: SM}, true},
		{Copy{Bytes: 0, Reps: 1, Kind: CE}, false},
		{Copy{Bytes: 1, Reps: 0, Kind: CE}, false},
		{Copy{Bytes: 1, Reps: 1, Warmup: -1, Kind: CE}, false},
		{Copy{Bytes: 1, Reps: 1, Kind: "x"}, false},
		{Copy{Bytes: 1, Reps: 1, Kind: CE, StartAt: -1}, false},
	}
	for _, tt := range tests {
		if err := tt.c.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok=%v", tt.c, err, tt.ok)
		}
	}
}

func TestMedian(t *testing.T) {
	us := time.Microsecond
	tests := []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5 * us}, 5 * us},
		{[]time.Duration{9 * us, 1 * us, 5 * us}, 5 * us},
		{[]time.Duration{4 * us, 1 * us, 100 * us, 2 * us}, 3 * us},
	}
	for _, tt := range tests {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// registryRuns gives each run of TestRegistry its own driver name: the registry has no Unregister
// (drivers register at init and stay), so go test -count=2 would otherwise register a name twice.
var registryRuns int

func TestRegistry(t *testing.T) {
	registryRuns++
	name := fmt.Sprintf("test-registry-%d", registryRuns)
	called := false
	Register(name, func(_ context.Context, cfg Config) (Engine, error) {
		called = cfg.Options == "x=1"
		return nil, nil
	})
	if _, err := Open(context.Background(), name, Config{Options: "x=1"}); err != nil || !called {
		t.Errorf("Open registered driver: err %v, called with options %v", err, called)
	}
	if _, err := Open(context.Background(), "nope", Config{}); err == nil || !strings.Contains(err.Error(), name) {
		t.Errorf("Open unknown driver = %v, want an error listing the drivers", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register(name, func(context.Context, Config) (Engine, error) { return nil, nil })
}

func TestMonotonicAndWaitUntil(t *testing.T) {
	a := Monotonic()
	if err := WaitUntil(context.Background(), a+20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := Monotonic() - a; d < 20*time.Millisecond || d > 5*time.Second {
		t.Errorf("WaitUntil(now+20ms) returned after %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitUntil(ctx, Monotonic()+time.Hour); err == nil {
		t.Error("WaitUntil ignored a cancelled context")
	}
	if err := WaitUntil(context.Background(), 0); err != nil {
		t.Errorf("WaitUntil(0) = %v", err)
	}
}
