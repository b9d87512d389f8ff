package schedules

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// DefaultMaxPorts is the largest matrix a reader accepts unless told otherwise.
const DefaultMaxPorts = 4096

// ReadCSV reads one n×n matrix of non-negative whole byte counts, comma or whitespace separated,
// with an optional header line (a first line that is not all numbers). name is used in errors,
// which name the line, the column and the value. maxPorts ≤ 0 means DefaultMaxPorts.
func ReadCSV(r io.Reader, name string, maxPorts int) (*Demand, error) {
	if maxPorts <= 0 {
		maxPorts = DefaultMaxPorts
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var rows [][]int64
	line := 0
	seenContent := false
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields, err := splitCSVLine(text)
		first := !seenContent
		seenContent = true
		if first && noneNumeric(fields) {
			continue // header: a first line in which no field is a number
		}
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		row := make([]int64, len(fields))
		for c, f := range fields {
			v, err := parseByteCount(f)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d, column %d: %w", name, line, c+1, err)
			}
			row[c] = v
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, fmt.Errorf("%s: line %d has %d values, earlier rows have %d (ragged matrix)", name, line, len(row), len(rows[0]))
		}
		if len(row) > maxPorts {
			return nil, fmt.Errorf("%s: line %d has %d columns, above the limit of %d ports", name, line, len(row), maxPorts)
		}
		rows = append(rows, row)
		if len(rows) > maxPorts {
			return nil, fmt.Errorf("%s: more than %d rows, above the limit of %d ports", name, maxPorts, maxPorts)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no matrix rows (n = 0)", name)
	}
	if len(rows) != len(rows[0]) {
		return nil, fmt.Errorf("%s: matrix is %d×%d, not square", name, len(rows), len(rows[0]))
	}
	return DemandFromRows(rows)
}

// splitCSVLine splits on commas (or semicolons) when the line has any, else on whitespace. With
// separators, an empty field is an error: a missing value must not silently shift the columns.
func splitCSVLine(text string) ([]string, error) {
	if !strings.ContainsAny(text, ",;") {
		return strings.Fields(text), nil
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' })
	raw := strings.Split(strings.ReplaceAll(text, ";", ","), ",")
	if len(raw) != len(fields) {
		for c, f := range raw {
			if strings.TrimSpace(f) == "" {
				return raw, fmt.Errorf("column %d is empty", c+1)
			}
		}
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields, nil
}

func noneNumeric(fields []string) bool {
	for _, f := range fields {
		if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil {
			return false
		}
	}
	return true
}

// parseByteCount accepts a whole non-negative number, also written as a float with no fraction
// (1e6, 4096.0), as NumPy's savetxt writes them.
func parseByteCount(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return 0, fmt.Errorf("value %q is negative", s)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !strings.Contains(err.Error(), "range"):
		return 0, fmt.Errorf("value %q is not a number", s)
	case math.IsNaN(f):
		return 0, fmt.Errorf("value %q is NaN, not a byte count", s)
	case math.IsInf(f, 0) || f >= math.MaxInt64:
		return 0, fmt.Errorf("value %q is out of range for a byte count", s)
	case f < 0:
		return 0, fmt.Errorf("value %q is negative", s)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("value %q is not a whole number of bytes", s)
	case f == 0 && strings.ContainsAny(strings.SplitN(strings.ToLower(s), "e", 2)[0], "123456789"):
		// A nonzero mantissa that parsed as 0 underflowed (1e-400): a fraction of a byte.
		return 0, fmt.Errorf("value %q is not a whole number of bytes", s)
	}
	return int64(f), nil
}
