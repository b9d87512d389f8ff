package main

import (
	"strings"
	"testing"
)

// Repetition counts above the worker protocol's limit are a usage error naming the flag, the
// value and the limit, before any worker starts.
func TestRepsLimitFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gpu-bench", "--fake", "--reps", "1000000000"}, `--reps 1000000000: at most 100000`},
		{[]string{"gpu-bench", "--fake", "--reps", "5000000", "--max", "4KiB"}, `--reps 5000000: at most 100000`},
		{[]string{"gpu-bench", "--fake", "--warmup", "100001"}, `--warmup 100001: at most 100000`},
		{[]string{"calibrate", "--fake", "--reps", "200000", "-o", t.TempDir() + "/c.json"}, `--reps 200000: at most 100000`},
	} {
		out, code, err := cli(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v (%s), want exit 2 naming %q", c.args, code, err, out, c.want)
		}
	}
}
