package transfer

import (
	"context"
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

func TestRegistry(t *testing.T) {
	called := false
	Register("test-registry", func(_ context.Context, cfg Config) (Engine, error) {
		called = cfg.Options == "x=1"
		return nil, nil
	})
	if _, err := Open(context.Background(), "test-registry", Config{Options: "x=1"}); err != nil || !called {
		t.Errorf("Open registered driver: err %v, called with options %v", err, called)
	}
	if _, err := Open(context.Background(), "nope", Config{}); err == nil || !strings.Contains(err.Error(), "test-registry") {
		t.Errorf("Open unknown driver = %v, want an error listing the drivers", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register("test-registry", func(context.Context, Config) (Engine, error) { return nil, nil })
}
