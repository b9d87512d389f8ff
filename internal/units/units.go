// Package units parses and formats the physical quantities on the command line and in reports:
// bandwidths (bits or bytes per second, never mixed silently), durations in seconds, and byte
// sizes. Inside the model, bytes are int64 and time is float64 seconds.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// splitNumber splits "800Gbps" into 800 and "Gbps".
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == 'e' && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+') || (s[i] == '-' || s[i] == '+') && (i == 0 || s[i-1] == 'e')) {
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q: bad number %q", s, s[:i])
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a finite number", s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

var bandwidthUnits = map[string]float64{
	// bits per second, decimal prefixes (network convention); converted to bytes.
	"bps": 1.0 / 8, "kbps": 1e3 / 8, "mbps": 1e6 / 8, "gbps": 1e9 / 8, "tbps": 1e12 / 8,
	"b/s": 1.0 / 8, "kb/s": 1e3 / 8, "mb/s": 1e6 / 8, "gb/s": 1e9 / 8, "tb/s": 1e12 / 8,
	"bit/s": 1.0 / 8, "kbit/s": 1e3 / 8, "mbit/s": 1e6 / 8, "gbit/s": 1e9 / 8, "tbit/s": 1e12 / 8,
}

var byteRateUnits = map[string]float64{
	"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30, "TiB/s": 1 << 40,
	"Bps": 1, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
}

// ParseBandwidth parses a bandwidth with its unit and returns bytes per second. Units with a
// lowercase b (Gbps, Gb/s, Gbit/s) are bits; units with an uppercase B (GB/s, GiB/s, GBps) are
// bytes. A number without a unit is rejected: 800 could be either.
func ParseBandwidth(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("bandwidth %q has no unit: write e.g. 800Gbps (bits) or 100GB/s (bytes)", s)
	}
	f, ok := byteRateUnits[unit]
	if !ok && !strings.Contains(unit, "B") {
		f, ok = bandwidthUnits[strings.ToLower(unit)]
	}
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: unknown unit %q (bits: bps, Kbps, Mbps, Gbps, Tbps; bytes: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s)", s, unit)
	}
	if v <= 0 {
		return 0, fmt.Errorf("bandwidth %q must be positive", s)
	}
	return v * f, nil
}

// durationDivisors turn a value in the unit into seconds by division: 10/1e6 is exactly the
// double nearest 1e-5, while 10*1e-6 is not, and a report should print 10µs as 1e-05 s.
var durationDivisors = map[string]float64{
	"ps": 1e12, "ns": 1e9, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e3, "s": 1,
}

// ParseDuration parses a non-negative duration with its unit (ps, ns, us or µs, ms, s) and returns
// seconds. "0" alone is accepted.
func ParseDuration(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		if v == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("duration %q has no unit: write e.g. 10us, 1ms or 10ns", s)
	}
	div, ok := durationDivisors[unit]
	if !ok {
		return 0, fmt.Errorf("duration %q: unknown unit %q (ps, ns, us, ms, s)", s, unit)
	}
	if v < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return v / div, nil
}

var byteUnits = map[string]float64{
	"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
}

// ParseBytes parses a byte count with an optional unit (B, KB, MB, GB, KiB, MiB, GiB, ...).
func ParseBytes(s string) (int64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	f, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (B, KB, MB, GB, KiB, MiB, GiB)", s, unit)
	}
	b := v * f
	if b < 0 || b != math.Trunc(b) || b > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is not a whole, non-negative number of bytes", s)
	}
	return int64(b), nil
}

// FormatSeconds prints a duration with an SI unit chosen for it: 12.3µs, 1.05ms, 2s.
func FormatSeconds(sec float64) string {
	a := math.Abs(sec)
	switch {
	case sec == 0:
		return "0s"
	case a < 1e-6:
		return strconv.FormatFloat(sec*1e9, 'g', 4, 64) + "ns"
	case a < 1e-3:
		return strconv.FormatFloat(sec*1e6, 'g', 4, 64) + "µs"
	case a < 1:
		return strconv.FormatFloat(sec*1e3, 'g', 4, 64) + "ms"
	}
	return strconv.FormatFloat(sec, 'g', 4, 64) + "s"
}

// FormatBandwidth prints bytes per second as bits per second, the unit links are sold in.
func FormatBandwidth(bytesPerSecond float64) string {
	bits := bytesPerSecond * 8
	switch {
	case bits >= 1e12:
		return strconv.FormatFloat(bits/1e12, 'g', 4, 64) + "Tbps"
	case bits >= 1e9:
		return strconv.FormatFloat(bits/1e9, 'g', 4, 64) + "Gbps"
	case bits >= 1e6:
		return strconv.FormatFloat(bits/1e6, 'g', 4, 64) + "Mbps"
	}
	return strconv.FormatFloat(bits, 'g', 4, 64) + "bps"
}

// FormatBytes prints a byte count with a binary unit: 4KiB, 1.5GiB.
func FormatBytes(b int64) string {
	f := float64(b)
	for _, u := range []struct {
		name string
		size float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if f >= u.size {
			return strconv.FormatFloat(f/u.size, 'g', 4, 64) + u.name
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}

// FormatBinary prints a byte count exactly, in the largest binary unit that divides it, with a
// space: "4 KiB", "1 GiB", "1536 B". Message-size sweeps use it, where 1.5MiB would hide a size.
func FormatBinary(n int64) string {
	names := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for i < len(names)-1 && n >= 1024 && n%1024 == 0 {
		n /= 1024
		i++
	}
	return strconv.FormatInt(n, 10) + " " + names[i]
}
