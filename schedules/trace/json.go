package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// fileMatrix is Matrix as it appears in a file: numbers kept as text so that a fractional,
// negative or huge value is reported with its position rather than as a type error.
type fileMatrix struct {
	Layer     json.Number         `json:"layer"`
	Phase     string              `json:"phase"`
	Iteration *json.Number        `json:"iteration"`
	Dataset   string              `json:"dataset"`
	Bytes     [][]json.RawMessage `json:"bytes"`
}

type fileTrace struct {
	Version  json.Number  `json:"version"`
	Meta     *Meta        `json:"meta"`
	Matrices []fileMatrix `json:"matrices"`
}

// Read reads a canonical JSON trace and validates it (see Validate). name is used in errors,
// which name the line or the field and the value. maxPorts ≤ 0 means the default limit.
func Read(r io.Reader, name string, maxPorts int) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t, err := decode(data, maxPorts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

func decode(data []byte, maxPorts int) (*Trace, error) {
	// The version decides how to read the rest, so check it before strict decoding: a version 2
	// file should say "version 2", not "unknown field".
	var probe struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, jsonError(data, err)
	}
	switch v := strings.TrimSpace(string(probe.Version)); v {
	case "":
		return nil, fmt.Errorf("field \"version\" is missing (want %d)", Version)
	case strconv.Itoa(Version):
	default:
		return nil, fmt.Errorf("version %s is not supported (this build reads version %d)", v, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ft fileTrace
	if err := dec.Decode(&ft); err != nil {
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		line, col := position(data, off)
		return nil, fmt.Errorf("line %d, column %d: trailing data after the trace object", line, col)
	}
	if ft.Meta == nil {
		return nil, fmt.Errorf("field \"meta\" is missing")
	}
	t := &Trace{Version: Version, Meta: *ft.Meta, Matrices: make([]Matrix, len(ft.Matrices))}
	for k, fm := range ft.Matrices {
		f := fmt.Sprintf("matrices[%d]", k)
		m := &t.Matrices[k]
		var err error
		if m.Layer, err = wholeInt(fm.Layer, f+".layer"); err != nil {
			return nil, err
		}
		if fm.Iteration != nil {
			it, err := wholeInt(*fm.Iteration, f+".iteration")
			if err != nil {
				return nil, err
			}
			m.Iteration = &it
		}
		m.Phase, m.Dataset = Phase(fm.Phase), fm.Dataset
		if len(fm.Bytes) > maxRows(maxPorts) {
			return nil, checkN(len(fm.Bytes), maxRows(maxPorts), f+".bytes")
		}
		m.Bytes = make([][]int64, len(fm.Bytes))
		for i, row := range fm.Bytes {
			m.Bytes[i] = make([]int64, len(row))
			for j, s := range row {
				if len(s) > 0 && (s[0] < '0' || s[0] > '9') && s[0] != '-' {
					return nil, fmt.Errorf("%s.bytes[%d][%d]: value %s is not a number", f, i, j, s)
				}
				v, err := ByteCount(string(s))
				if err != nil {
					return nil, fmt.Errorf("%s.bytes[%d][%d]: %w", f, i, j, err)
				}
				m.Bytes[i][j] = v
			}
		}
	}
	if err := t.Validate(maxPorts); err != nil {
		return nil, err
	}
	return t, nil
}

func maxRows(maxPorts int) int {
	if maxPorts <= 0 {
		return schedules.DefaultMaxPorts
	}
	return maxPorts
}

// wholeInt parses a JSON number that must be a whole number in int range.
func wholeInt(s json.Number, field string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("field %q is missing", field)
	}
	v, err := strconv.ParseInt(string(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s = %s is not a whole number in range", field, s)
	}
	return int(v), nil
}

// ByteCount parses one matrix entry: a whole, non-negative number of bytes, also written as a
// float without a fraction (4096.0, 1e6), as NumPy writes them. The error names the value.
func ByteCount(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return 0, fmt.Errorf("value %s is negative", s)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	return floatBytes(f, s)
}

// floatBytes checks a float for being a byte count; s is how the value is shown in errors.
func floatBytes(f float64, s string) (int64, error) {
	switch {
	case math.IsNaN(f):
		return 0, fmt.Errorf("value %s is NaN, not a byte count", s)
	case math.IsInf(f, 0):
		return 0, fmt.Errorf("value %s is infinite, not a byte count", s)
	case f < 0:
		return 0, fmt.Errorf("value %s is negative", s)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("value %s is not a whole number of bytes", s)
	case f >= math.MaxInt64:
		return 0, fmt.Errorf("value %s is too large for a byte count", s)
	case f == 0 && strings.ContainsAny(strings.TrimLeft(s, "-+0."), "123456789"):
		// 1e-400 parses to 0 but is not zero: a fraction of a byte.
		return 0, fmt.Errorf("value %s is not a whole number of bytes", s)
	}
	return int64(f), nil
}

// jsonError turns a decoding error into one that names the line and column (or the field).
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end"):
		line, _ := position(data, se.Offset)
		return fmt.Errorf("line %d: truncated file: unexpected end of JSON input", line)
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		line, col := position(data, se.Offset-1)
		return fmt.Errorf("line %d, column %d: trailing data after the JSON value", line, col)
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("line %d, column %d: malformed JSON: %v", line, col, se)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Errorf("line %d, column %d: field %s: a JSON %s where %s was expected", line, col, field, te.Value, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, _ := position(data, int64(len(data)))
		return fmt.Errorf("line %d: truncated file: unexpected end of JSON input", line)
	}
	return fmt.Errorf("%w", err)
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Write writes t in canonical form: the metadata as indented JSON, then one matrix row per line,
// so that the same trace always gives the same bytes and a diff shows which rows changed.
func (t *Trace) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	meta, err := json.MarshalIndent(t.Meta, "  ", "  ")
	if err != nil {
		return err
	}
	meta = numberList.ReplaceAllFunc(meta, compactList)
	fmt.Fprintf(bw, "{\n  \"version\": %d,\n  \"meta\": %s,\n  \"matrices\": [", Version, meta)
	for k := range t.Matrices {
		m := &t.Matrices[k]
		if k > 0 {
			bw.WriteString(",")
		}
		fmt.Fprintf(bw, "\n    {\"layer\": %d, \"phase\": %s", m.Layer, quote(string(m.Phase)))
		if m.Iteration != nil {
			fmt.Fprintf(bw, ", \"iteration\": %d", *m.Iteration)
		}
		if m.Dataset != "" {
			fmt.Fprintf(bw, ", \"dataset\": %s", quote(m.Dataset))
		}
		bw.WriteString(", \"bytes\": [")
		for i, row := range m.Bytes {
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n      [")
			for j, v := range row {
				if j > 0 {
					bw.WriteString(", ")
				}
				bw.WriteString(strconv.FormatInt(v, 10))
			}
			bw.WriteString("]")
		}
		bw.WriteString("\n    ]}")
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}

// numberList matches a JSON array of integers as MarshalIndent spreads it over lines. It needs a
// raw newline after the bracket, which only indentation has (strings escape theirs).
var numberList = regexp.MustCompile(`\[\n[0-9\s,-]*\]`)

// compactList puts a list of numbers on one line: [0, 1, 2].
func compactList(b []byte) []byte {
	f := strings.FieldsFunc(string(b[1:len(b)-1]), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
	return []byte("[" + strings.Join(f, ", ") + "]")
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// Marshal returns the canonical bytes of t (see Write).
func (t *Trace) Marshal() ([]byte, error) {
	var b bytes.Buffer
	if err := t.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
