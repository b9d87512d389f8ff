package cudaengine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// TestOpenWithoutDriver runs where there is no NVIDIA driver (CI): opening the engine must fail
// with an error that names the missing library and suggests --fake.
func TestOpenWithoutDriver(t *testing.T) {
	if _, err := cuda.Load(); err == nil {
		t.Skip("libcuda.so.1 is present")
	}
	_, err := transfer.Open(context.Background(), "cuda", transfer.Config{Device: transfer.Device{GPU: 0}})
	if !errors.Is(err, cuda.ErrUnavailable) {
		t.Fatalf("err = %v, want cuda.ErrUnavailable", err)
	}
	for _, want := range []string{"libcuda.so.1", "--fake"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	_, err := transfer.Open(context.Background(), "cuda", transfer.Config{Options: "alpha=1"})
	if err == nil || !strings.Contains(err.Error(), `"alpha=1"`) {
		t.Errorf("err = %v, want the options named", err)
	}
}
