package schedules

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
)

// DefaultMaxPorts is the largest matrix a reader accepts unless told otherwise.
const DefaultMaxPorts = 4096

// bytesPerValue is the room a CSV line has per value: numpy.savetxt's widest ("%.18e", 25
// characters) with its separator, and then more than twice that for padding.
const bytesPerValue = 64

// ReadCSV reads one n×n matrix of non-negative whole byte counts, comma or whitespace separated,
// with an optional header line (a first line that is not all numbers, with one name per column).
// Values are decimal: digits, optionally a fraction and an exponent, as NumPy writes them; Go
// literal syntax (1_000, 0x1p4) is refused. name is used in errors, which name the line, the
// column and the value. maxPorts ≤ 0 means DefaultMaxPorts; it also bounds a line's length
// (64 bytes per value). The matrix must be within the byte limits (Demand.CheckLimits).
func ReadCSV(r io.Reader, name string, maxPorts int) (*Demand, error) {
	if maxPorts <= 0 {
		maxPorts = DefaultMaxPorts
	}
	maxLine := maxPorts*bytesPerValue + 4096
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(maxLine, 64*1024)), maxLine)
	var cells []int64
	cols, rows := 0, 0
	line := 0
	seenContent := false
	header, headerLine := -1, 0
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
			header, headerLine = len(fields), line // a first line in which no field is a number
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		if rows == 0 {
			cols = len(fields)
			if cols > maxPorts {
				return nil, fmt.Errorf("%s: line %d has %d columns, %w of %d ports (raise it with --max-ports)", name, line, cols, ErrLimit, maxPorts)
			}
			if header >= 0 && header != cols {
				return nil, fmt.Errorf("%s: line %d is a header of %d names over rows of %d values (line %d)", name, headerLine, header, cols, line)
			}
			cells = make([]int64, 0, cols*min(cols, 64))
		}
		// Values first: a bad value says more about a stray line than its count does.
		for c, f := range fields {
			v, err := parseByteCount(f)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d, column %d: %w", name, line, c+1, err)
			}
			cells = append(cells, v)
		}
		if len(fields) != cols {
			return nil, fmt.Errorf("%s: line %d has %d values, earlier rows have %d (ragged matrix)", name, line, len(fields), cols)
		}
		if rows == cols {
			return nil, fmt.Errorf("%s: line %d: more rows than the %d columns (matrix not square)", name, line, cols)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: line %d is longer than %d bytes, %w for a row of at most %d values (%d bytes per value; raise it with --max-ports)",
				name, line+1, maxLine, ErrLimit, maxPorts, bytesPerValue)
		}
		return nil, fmt.Errorf("%s: line %d: %w", name, line+1, err)
	}
	if rows == 0 {
		return nil, fmt.Errorf("%s: no matrix rows (n = 0)", name)
	}
	if rows != cols {
		return nil, fmt.Errorf("%s: matrix is %d×%d, not square", name, rows, cols)
	}
	d := demandOver(cells, cols)
	if err := d.CheckLimits(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
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

// isDecimal says whether s has the syntax of a CSV value: an optionally signed decimal with an
// optional fraction and exponent, [+-]?(d+.?d*|.d+)([eE][+-]?d+)?. strconv alone would also
// take Go literals (1_000, 0x1p4, Inf). Written out because a regexp made reading a dense
// 4096² CSV four times slower.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	mantissa := digits()
	if i < len(s) && s[i] == '.' {
		i++
		mantissa += digits()
	}
	if mantissa == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// parseByteCount accepts a whole non-negative number, also written as a float with no fraction
// (1e6, 4096.0), as NumPy's savetxt writes them.
func parseByteCount(s string) (int64, error) {
	if !isDecimal(s) {
		switch f, err := strconv.ParseFloat(s, 64); {
		case err == nil && math.IsNaN(f):
			return 0, fmt.Errorf("value %q is NaN, not a byte count", s)
		case err == nil && math.IsInf(f, 0):
			return 0, fmt.Errorf("value %q is out of range for a byte count (infinite)", s)
		}
		return 0, fmt.Errorf("value %q is not a number (want decimal digits, e.g. 4096 or 4.096e3)", jsonerr.Shorten(s))
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return 0, fmt.Errorf("value %q is negative", s)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !strings.Contains(err.Error(), "range"):
		return 0, fmt.Errorf("value %q is not a number", jsonerr.Shorten(s))
	case math.IsInf(f, 0) || f >= math.MaxInt64:
		return 0, fmt.Errorf("value %q is out of range for a byte count", jsonerr.Shorten(s))
	case f < 0:
		return 0, fmt.Errorf("value %q is negative", jsonerr.Shorten(s))
	case f != math.Trunc(f):
		return 0, fmt.Errorf("value %q is not a whole number of bytes", jsonerr.Shorten(s))
	case f == 0 && strings.ContainsAny(strings.SplitN(strings.ToLower(s), "e", 2)[0], "123456789"):
		// A nonzero mantissa that parsed as 0 underflowed (1e-400): a fraction of a byte.
		return 0, fmt.Errorf("value %q is not a whole number of bytes", jsonerr.Shorten(s))
	}
	return int64(f), nil
}
