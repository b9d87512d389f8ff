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

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// fileMatrix is Matrix as it appears in a file: numbers kept as text so that a fractional,
// negative or huge value is reported with its position rather than as a type error.
type fileMatrix struct {
	Layer     json.Number  `json:"layer"`
	Phase     string       `json:"phase"`
	Iteration *json.Number `json:"iteration"`
	Dataset   string       `json:"dataset"`
	Bytes     rawMatrix    `json:"bytes"`
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
	t, err := decode(bytes.NewReader(data), func() ([]byte, error) { return data, nil }, maxPorts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// decode reads one trace object from r. The file's bytes are needed only to explain an error
// (its line and column, the version of a file that does not decode), so reread fetches them
// then: a trace read from disk is never held whole next to its matrices.
func decode(r io.Reader, reread func() ([]byte, error), maxPorts int) (*Trace, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var ft fileTrace
	err := dec.Decode(&ft)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errTrailing
		}
	}
	if err != nil {
		data, rerr := reread()
		if rerr != nil {
			return nil, rerr
		}
		return nil, explain(data, err)
	}
	switch v := string(ft.Version); v {
	case "":
		return nil, fmt.Errorf("field \"version\" is missing (want %d)", Version)
	case strconv.Itoa(Version):
	default:
		return nil, fmt.Errorf("version %s is not supported (this build reads version %d)", v, Version)
	}
	if ft.Meta == nil {
		return nil, fmt.Errorf("field \"meta\" is missing")
	}
	t := &Trace{Version: Version, Meta: *ft.Meta, Matrices: make([]Matrix, len(ft.Matrices))}
	// An empty list or map is written as nothing (omitempty): read it as nothing, so that
	// reading canonical output gives back the same trace.
	if len(t.Meta.DenseLayers) == 0 {
		t.Meta.DenseLayers = nil
	}
	if len(t.Meta.ExpertGPUs) == 0 {
		t.Meta.ExpertGPUs = nil
	}
	if len(t.Meta.Params) == 0 {
		t.Meta.Params = nil
	}
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
		if fm.Bytes.err != nil {
			return nil, fmt.Errorf("%s.bytes%w", f, fm.Bytes.err)
		}
		if len(fm.Bytes.rowLens) > maxRows(maxPorts) {
			return nil, checkN(len(fm.Bytes.rowLens), maxRows(maxPorts), f+".bytes")
		}
		m.Bytes = fm.Bytes.rows()
	}
	if err := t.Validate(maxPorts); err != nil {
		return nil, err
	}
	return t, nil
}

// rawMatrix decodes a matrix's "bytes" array of arrays straight into one block of int64s, so
// that reading a matrix holds it once (a json.RawMessage per cell took 32 bytes and an
// allocation each: 6 GB for six 4096² matrices). The first bad value is kept in err, with its
// [i][j], for decode to report with the matrix's field name; the decoder has already checked
// the JSON syntax.
type rawMatrix struct {
	cells   []int64
	rowLens []int
	err     error
}

func (m *rawMatrix) UnmarshalJSON(b []byte) error {
	*m = rawMatrix{} // a repeated key replaces the value, as for every other field
	p := &cellParser{b: b}
	p.space()
	if p.lit("null") {
		return nil
	}
	if !p.eat('[') {
		m.err = fmt.Errorf(": value %s is not an array of rows", shortValue(b))
		return nil
	}
	for i := 0; ; i++ {
		p.space()
		if p.eat(']') {
			return nil
		}
		if i > 0 && !p.eat(',') {
			return fmt.Errorf("malformed array of rows")
		}
		p.space()
		if !p.eat('[') {
			m.err = fmt.Errorf("[%d]: value %s is not an array of values", i, shortValue(p.value()))
			return nil
		}
		n := 0
		for j := 0; ; j++ {
			p.space()
			if p.eat(']') {
				break
			}
			if j > 0 && !p.eat(',') {
				return fmt.Errorf("malformed row")
			}
			p.space()
			v := p.value()
			if len(v) > 0 && (v[0] < '0' || v[0] > '9') && v[0] != '-' {
				m.err = fmt.Errorf("[%d][%d]: value %s is not a number", i, j, shortValue(v))
				return nil
			}
			x, ok := smallInt(v)
			var err error
			if !ok {
				x, err = ByteCount(string(v))
			}
			if err != nil {
				m.err = fmt.Errorf("[%d][%d]: %w", i, j, err)
				return nil
			}
			if i == 0 && j == 0 {
				// Room for a square matrix at once, rather than doubling past it; a cell takes at
				// least two bytes of the array, which bounds what a lying first row can ask for.
				if guess := len(b) / 2; guess > 0 {
					m.cells = make([]int64, 0, min(guess, estimateSquare(b)))
				}
			}
			m.cells = append(m.cells, x)
			n++
		}
		m.rowLens = append(m.rowLens, n)
	}
}

// smallInt parses the common case, up to 15 decimal digits, without converting to a string.
func smallInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// estimateSquare guesses n² from the first row's length: the number of commas before the first
// closing bracket, plus one, squared.
func estimateSquare(b []byte) int {
	end := bytes.IndexByte(b, ']')
	if end < 0 {
		return 0
	}
	n := bytes.Count(b[:end], []byte{','}) + 1
	return n * n
}

// rows slices the cells into rows of their lengths in the file (Validate reports ragged ones).
func (m *rawMatrix) rows() [][]int64 {
	rows := make([][]int64, len(m.rowLens))
	off := 0
	for i, n := range m.rowLens {
		rows[i] = m.cells[off : off+n : off+n]
		off += n
	}
	return rows
}

// cellParser walks JSON that the decoder has already found well-formed.
type cellParser struct {
	b []byte
	i int
}

func (p *cellParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *cellParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *cellParser) lit(s string) bool {
	if bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

// value returns the next JSON value (a number, string, literal, array or object) and moves past it.
func (p *cellParser) value() []byte {
	start := p.i
	depth := 0
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			p.i++
		case c == '[' || c == '{':
			depth++
			p.i++
		case c == ']' || c == '}':
			if depth == 0 {
				return p.b[start:p.i]
			}
			depth--
			p.i++
		case c == ',' && depth == 0:
			return p.b[start:p.i]
		case (c == ' ' || c == '\t' || c == '\n' || c == '\r') && depth == 0:
			return p.b[start:p.i]
		default:
			p.i++
		}
		if depth == 0 && p.i > start && (c == '"' || c == ']' || c == '}') {
			return p.b[start:p.i]
		}
	}
	return p.b[start:min(p.i, len(p.b))]
}

// shortValue shows a value in an error, cut to 40 bytes so that a huge one is not echoed.
func shortValue(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

var errTrailing = errors.New("trailing data")

// explain turns a decoding error into one that names the line and column, or the version: the
// version decides how to read the rest, so a version 2 file says "version 2", not "unknown
// field".
func explain(data []byte, err error) error {
	var probe struct {
		Version json.RawMessage `json:"version"`
	}
	if perr := json.Unmarshal(data, &probe); perr != nil {
		return jsonError(data, perr)
	}
	switch v := strings.TrimSpace(string(probe.Version)); v {
	case "":
		return fmt.Errorf("field \"version\" is missing (want %d)", Version)
	case strconv.Itoa(Version):
	default:
		return fmt.Errorf("version %s is not supported (this build reads version %d)", v, Version)
	}
	if err == errTrailing {
		// The object decoded, so the trailing data starts after its closing brace.
		var v json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(data))
		_ = dec.Decode(&v)
		off := dec.InputOffset()
		off += int64(len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n")))
		line, col := position(data, off)
		return fmt.Errorf("line %d, column %d: trailing data after the trace object", line, col)
	}
	return jsonError(data, err)
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

// jsonError turns a decoding error into one line that names the line and column, the field and
// the value (package jsonerr, shared with the schedule reader).
func jsonError(data []byte, err error) error { return jsonerr.Describe(data, err) }

// position converts a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) { return jsonerr.Position(data, off) }

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
