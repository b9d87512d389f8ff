package trace

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/schedules"
)

var npyMagic = []byte("\x93NUMPY")

// IsNPY says whether data starts like a NumPy .npy file.
func IsNPY(data []byte) bool { return len(data) >= 6 && string(data[:6]) == string(npyMagic) }

// maxNPYHeader is the longest .npy header accepted: NumPy's own max_header_size (numpy.load
// refuses longer ones too). The arrays this reads have headers of about 128 bytes.
const maxNPYHeader = 10000

// ReadNPY reads a NumPy .npy array of byte counts: little-endian integers (i1..i8, u1..u8) or
// floats (f4, f8) in C order, shaped n×n (one matrix) or m×n×n. Floats must hold whole,
// non-negative, finite values. The file must end exactly where the array does. It streams: the
// matrices grow row by row as the data arrives, so a header that promises more than the file
// holds costs nothing, and the file is never held next to its matrices.
func ReadNPY(r io.Reader, name string, maxPorts int) ([][][]int64, error) {
	ms, err := decodeNPY(bufio.NewReaderSize(r, 64*1024), maxPorts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ms, nil
}

type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
}

func decodeNPY(r *bufio.Reader, maxPorts int) ([][][]int64, error) {
	if maxPorts <= 0 {
		maxPorts = schedules.DefaultMaxPorts
	}
	pre := make([]byte, 12)
	got, _ := io.ReadFull(r, pre[:10])
	if !IsNPY(pre[:got]) {
		return nil, fmt.Errorf("not a .npy file (no \\x93NUMPY magic)")
	}
	if got < 10 {
		return nil, fmt.Errorf("truncated file: %d bytes, the .npy preamble alone is 10", got)
	}
	major := pre[6]
	var hlen int
	switch major {
	case 1:
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		if k, _ := io.ReadFull(r, pre[10:12]); k < 2 {
			return nil, fmt.Errorf("truncated file: %d bytes, a version %d preamble is 12", 10+k, major)
		}
		hlen = int(binary.LittleEndian.Uint32(pre[8:12]))
	default:
		return nil, fmt.Errorf("unknown .npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, pre[7])
	}
	if hlen > maxNPYHeader {
		return nil, fmt.Errorf("header is %d bytes, %w of %d bytes (NumPy's max_header_size)", hlen, schedules.ErrLimit, maxNPYHeader)
	}
	hb := make([]byte, hlen)
	if k, _ := io.ReadFull(r, hb); k < hlen {
		return nil, fmt.Errorf("truncated file: header says %d bytes, only %d follow", hlen, k)
	}
	h, err := parseNPYHeader(string(hb))
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	conv, size, err := npyDtype(h.descr)
	if err != nil {
		return nil, fmt.Errorf("header field 'descr': %w", err)
	}
	if h.fortran {
		return nil, fmt.Errorf("header field 'fortran_order' is True: save the array in C order (np.ascontiguousarray)")
	}
	var m, n int
	switch len(h.shape) {
	case 2:
		m, n = 1, h.shape[0]
		if h.shape[1] != n {
			return nil, fmt.Errorf("header field 'shape' (%d, %d): matrix is not square", h.shape[0], h.shape[1])
		}
	case 3:
		m, n = h.shape[0], h.shape[1]
		if h.shape[2] != n {
			return nil, fmt.Errorf("header field 'shape' (%d, %d, %d): matrices are not square", h.shape[0], h.shape[1], h.shape[2])
		}
	default:
		return nil, fmt.Errorf("header field 'shape' has %d dimensions; want n×n or m×n×n", len(h.shape))
	}
	if err := checkN(n, maxPorts, "header field 'shape'"); err != nil {
		return nil, err
	}
	if m == 0 {
		return nil, fmt.Errorf("header field 'shape': no matrices (m = 0)")
	}
	hi1, cells := bits.Mul64(uint64(n), uint64(n))
	hi2, elems := bits.Mul64(cells, uint64(m))
	hi3, want := bits.Mul64(elems, uint64(size))
	overflow := hi1|hi2|hi3 != 0
	// truncated reports a file that ends before the data the shape needs (read is what came).
	truncated := func(read uint64) error {
		if overflow {
			want = math.MaxUint64
		}
		return fmt.Errorf("truncated file: shape %v of %s needs %d data bytes, %d present", h.shape, h.descr, want, read)
	}
	rowBytes := n * size
	buf := make([]byte, rowBytes)
	var ms [][][]int64
	var read uint64
	for k := 0; k < m; k++ {
		var mat [][]int64
		for i := 0; i < n; i++ {
			got, _ := io.ReadFull(r, buf)
			read += uint64(got)
			if got < rowBytes {
				rest, _ := io.Copy(io.Discard, r)
				return nil, truncated(read + uint64(rest))
			}
			row := make([]int64, n)
			for j := range row {
				v, err := conv(buf[j*size : (j+1)*size])
				if err != nil {
					return nil, fmt.Errorf("matrix %d, row %d, column %d: %w", k, i, j, err)
				}
				row[j] = v
			}
			mat = append(mat, row)
		}
		ms = append(ms, mat)
	}
	if extra, _ := io.Copy(io.Discard, r); extra > 0 {
		return nil, fmt.Errorf("trailing garbage: %d bytes after the %d data bytes of shape %v", extra, want, h.shape)
	}
	return ms, nil
}

// npyDtype returns a converter for one little-endian element and its size.
func npyDtype(descr string) (func([]byte) (int64, error), int, error) {
	if len(descr) > 16 {
		return nil, 0, fmt.Errorf("dtype %s is not supported (want little-endian i1-i8, u1-u8, f4 or f8)", quoteShort(descr))
	}
	if len(descr) < 3 {
		return nil, 0, fmt.Errorf("dtype %q is not supported", descr)
	}
	order, kind := descr[0], descr[1]
	size, err := strconv.Atoi(descr[2:])
	if err != nil {
		return nil, 0, fmt.Errorf("dtype %q is not supported", descr)
	}
	if order == '>' && size > 1 {
		return nil, 0, fmt.Errorf("dtype %q is big-endian; save little-endian ('<i8')", descr)
	}
	if order != '<' && order != '|' && !(order == '>' && size == 1) {
		return nil, 0, fmt.Errorf("dtype %q: byte order %q is not supported", descr, order)
	}
	le := binary.LittleEndian
	switch {
	case kind == 'i' && size == 1:
		return func(b []byte) (int64, error) { return signed(int64(int8(b[0]))) }, 1, nil
	case kind == 'i' && size == 2:
		return func(b []byte) (int64, error) { return signed(int64(int16(le.Uint16(b)))) }, 2, nil
	case kind == 'i' && size == 4:
		return func(b []byte) (int64, error) { return signed(int64(int32(le.Uint32(b)))) }, 4, nil
	case kind == 'i' && size == 8:
		return func(b []byte) (int64, error) { return signed(int64(le.Uint64(b))) }, 8, nil
	case kind == 'u' && size == 1:
		return func(b []byte) (int64, error) { return int64(b[0]), nil }, 1, nil
	case kind == 'u' && size == 2:
		return func(b []byte) (int64, error) { return int64(le.Uint16(b)), nil }, 2, nil
	case kind == 'u' && size == 4:
		return func(b []byte) (int64, error) { return int64(le.Uint32(b)), nil }, 4, nil
	case kind == 'u' && size == 8:
		return func(b []byte) (int64, error) {
			v := le.Uint64(b)
			if v > math.MaxInt64 {
				return 0, fmt.Errorf("value %d is too large for a byte count", v)
			}
			return int64(v), nil
		}, 8, nil
	case kind == 'f' && size == 4:
		return func(b []byte) (int64, error) {
			f := float64(math.Float32frombits(le.Uint32(b)))
			return floatBytes(f, strconv.FormatFloat(f, 'g', -1, 32))
		}, 4, nil
	case kind == 'f' && size == 8:
		return func(b []byte) (int64, error) {
			f := math.Float64frombits(le.Uint64(b))
			return floatBytes(f, strconv.FormatFloat(f, 'g', -1, 64))
		}, 8, nil
	}
	return nil, 0, fmt.Errorf("dtype %q is not supported (want little-endian i1-i8, u1-u8, f4 or f8)", descr)
}

func signed(v int64) (int64, error) {
	if v < 0 {
		return 0, fmt.Errorf("value %d is negative", v)
	}
	return v, nil
}

// parseNPYHeader parses the Python dict literal of a .npy header:
// {'descr': '<i8', 'fortran_order': False, 'shape': (3, 8, 8), }
func parseNPYHeader(s string) (npyHeader, error) {
	var h npyHeader
	p := &pyParser{s: strings.TrimRight(s, " \n\x00")}
	if !p.eat('{') {
		return h, fmt.Errorf("%s is not a Python dict", p.show())
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return h, err
		}
		p.space()
		if !p.eat(':') {
			return h, fmt.Errorf("missing ':' after key %s", quoteShort(key))
		}
		p.space()
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("'descr': %w", err)
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return h, fmt.Errorf("'fortran_order': %w", err)
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, fmt.Errorf("'shape': %w", err)
			}
		default:
			return h, fmt.Errorf("unknown key %s", quoteShort(key))
		}
		seen[key] = true
		p.space()
		if !p.eat(',') {
			p.space()
			if !p.eat('}') {
				return h, fmt.Errorf("expected ',' or '}' at offset %d of %s", p.i, p.show())
			}
			break
		}
	}
	if p.i != len(p.s) {
		return h, fmt.Errorf("trailing text %s after the dict", quoteShort(p.s[p.i:]))
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("key %q is missing", k)
		}
	}
	return h, nil
}

type pyParser struct {
	s string
	i int
}

// show quotes the header for an error, cut to 80 characters around the point reached: a 100 KB
// header must not be echoed into the terminal.
func (p *pyParser) show() string {
	if len(p.s) <= 80 {
		return strconv.Quote(p.s)
	}
	from := max(0, min(p.i-40, len(p.s)-80))
	s := strconv.Quote(p.s[from : from+80])
	if from > 0 {
		s = "..." + s
	}
	if from+80 < len(p.s) {
		s += fmt.Sprintf("... (%d bytes)", len(p.s))
	}
	return s
}

func quoteShort(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("expected a quoted string at offset %d of %s", p.i, p.show())
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", fmt.Errorf("unterminated string at offset %d of %s", p.i, p.show())
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyParser) boolean() (bool, error) {
	for _, w := range []struct {
		s string
		v bool
	}{{"True", true}, {"False", false}} {
		if strings.HasPrefix(p.s[p.i:], w.s) {
			p.i += len(w.s)
			return w.v, nil
		}
	}
	return false, fmt.Errorf("expected True or False at offset %d of %s", p.i, p.show())
}

func (p *pyParser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, fmt.Errorf("expected a tuple at offset %d of %s", p.i, p.show())
	}
	var dims []int
	for {
		p.space()
		if p.eat(')') {
			return dims, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		v, err := strconv.Atoi(p.s[p.i:j])
		if err != nil || j-p.i > 9 {
			return nil, fmt.Errorf("bad dimension %s at offset %d of %s", quoteShort(p.s[p.i:j]), p.i, p.show())
		}
		dims = append(dims, v)
		p.i = j
		p.space()
		if !p.eat(',') {
			p.space()
			if !p.eat(')') {
				return nil, fmt.Errorf("expected ',' or ')' at offset %d of %s", p.i, p.show())
			}
			return dims, nil
		}
	}
}

// WriteNPY writes matrices as one little-endian int64 .npy array in C order: n×n for one
// matrix, m×n×n for several. All matrices must be n×n with the same n.
func WriteNPY(w io.Writer, ms [][][]int64) error {
	if len(ms) == 0 || len(ms[0]) == 0 {
		return fmt.Errorf("no matrices to write")
	}
	n := len(ms[0])
	shape := fmt.Sprintf("(%d, %d)", n, n)
	if len(ms) > 1 {
		shape = fmt.Sprintf("(%d, %d, %d)", len(ms), n, n)
	}
	header := fmt.Sprintf("{'descr': '<i8', 'fortran_order': False, 'shape': %s, }", shape)
	// NumPy pads the header with spaces so that the data starts on a 64-byte boundary.
	pad := 64 - (10+len(header)+1)%64
	if pad == 64 {
		pad = 0
	}
	header += strings.Repeat(" ", pad) + "\n"
	bw := bufio.NewWriter(w)
	bw.Write(npyMagic)
	bw.Write([]byte{1, 0})
	binary.Write(bw, binary.LittleEndian, uint16(len(header)))
	bw.WriteString(header)
	var buf [8]byte
	for k, m := range ms {
		if len(m) != n {
			return fmt.Errorf("matrix %d is %d×%d, matrix 0 is %d×%d", k, len(m), len(m), n, n)
		}
		for i, row := range m {
			if len(row) != n {
				return fmt.Errorf("matrix %d row %d has %d values, want %d", k, i, len(row), n)
			}
			for _, v := range row {
				binary.LittleEndian.PutUint64(buf[:], uint64(v))
				bw.Write(buf[:])
			}
		}
	}
	return bw.Flush()
}
