package units

import (
	"math"
	"testing"
)

func TestParseBandwidth(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		bad  bool
	}{
		{"800Gbps", 100e9, false},
		{"800Gb/s", 100e9, false},
		{"100GB/s", 100e9, false},
		{"1.6Tbps", 200e9, false},
		{"25GiB/s", 25 * (1 << 30), false},
		{"400gbps", 50e9, false},
		{"800", 0, true},
		{"-1Gbps", 0, true},
		{"0Gbps", 0, true},
		{"10furlongs", 0, true},
		{"Gbps", 0, true},
		{"NaNGbps", 0, true},
	}
	for _, c := range cases {
		got, err := ParseBandwidth(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseBandwidth(%q) = %g, want an error", c.in, got)
			}
			continue
		}
		if err != nil || math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("ParseBandwidth(%q) = %g, %v; want %g", c.in, got, err, c.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		bad  bool
	}{
		{"10us", 10e-6, false},
		{"10µs", 10e-6, false},
		{"10ns", 10e-9, false},
		{"1ms", 1e-3, false},
		{"0", 0, false},
		{"2.5s", 2.5, false},
		{"1e-3s", 1e-3, false},
		{"10", 0, true},
		{"-1us", 0, true},
		{"1h", 0, true},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseDuration(%q) = %g, want an error", c.in, got)
			}
			continue
		}
		if err != nil || math.Abs(got-c.want) > 1e-12*math.Max(1, c.want) {
			t.Errorf("ParseDuration(%q) = %g, %v; want %g", c.in, got, err, c.want)
		}
	}
}

// The seed's grid values must come out as the doubles a person would write, so that reports
// and files show 1e-05, not 9.999999999999999e-06.
func TestParseDurationIsExactForDecimalValues(t *testing.T) {
	for in, want := range map[string]float64{"10ns": 1e-8, "100ns": 1e-7, "1us": 1e-6, "10us": 1e-5, "100us": 1e-4, "1ms": 1e-3, "10ms": 1e-2, "3ps": 3e-12} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want exactly %v", in, got, err, want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"4KiB": 4096, "1GiB": 1 << 30, "4096": 4096, "1.5KB": 1500} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5B", "-4KiB", "3 parsecs"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q): want an error", in)
		}
	}
}

func TestFormatBinary(t *testing.T) {
	for n, want := range map[int64]string{4096: "4 KiB", 1 << 30: "1 GiB", 1536: "1536 B", 3 << 20: "3 MiB", 0: "0 B"} {
		if got := FormatBinary(n); got != want {
			t.Errorf("FormatBinary(%d) = %q, want %q", n, got, want)
		}
	}
}
