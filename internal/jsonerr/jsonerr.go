// Package jsonerr turns encoding/json's errors into one-line messages that name the line, the
// column, the field and the value, for the readers of schedule, timeline, run-record and trace
// files: a user who typed "n": "4" should read `field n: value "4" is a JSON string, want an
// integer`, not a Go type path.
package jsonerr

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Describe rewrites err, returned while decoding data, as one line. Errors it does not know
// pass through unchanged (wrapped, so errors.Is still sees them).
func Describe(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end"):
		line, _ := Position(data, se.Offset)
		return fmt.Errorf("line %d: truncated file: unexpected end of JSON input", line)
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		line, col := Position(data, se.Offset-1)
		return fmt.Errorf("line %d, column %d: trailing data after the JSON value", line, col)
	case errors.As(err, &se):
		line, col := Position(data, se.Offset)
		return fmt.Errorf("line %d, column %d: malformed JSON: %v", line, col, se)
	case errors.As(err, &te):
		line, col := Position(data, te.Offset)
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Errorf("line %d, column %d: field %s: %s", line, col, field, TypeProblem(data, te))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// The decoder does not say where; the name is enough to find it.
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, _ := Position(data, int64(len(data)))
		return fmt.Errorf("line %d: truncated file: unexpected end of JSON input", line)
	}
	return fmt.Errorf("%w", err)
}

// TypeProblem says what was found and what was wanted, for te returned while decoding data: the
// value itself for a literal (cut to 40 characters, so that a huge string is not echoed), the
// JSON kind for an object or array. A value that decodes itself (a json.Unmarshaler, which sees
// only its own bytes) words its errors with it, so that they read as the file's other fields'.
func TypeProblem(data []byte, te *json.UnmarshalTypeError) string {
	kind, _, _ := strings.Cut(te.Value, " ")
	want := goType(te.Type)
	lit := literalBefore(data, te.Offset)
	switch kind {
	case "number":
		if strings.Contains(want, "integer") && !strings.ContainsAny(lit, ".eE") {
			return fmt.Sprintf("value %s is out of range for %s", lit, want)
		}
		return fmt.Sprintf("value %s is not %s", lit, want)
	case "string", "bool", "null":
		if lit != "" {
			return fmt.Sprintf("value %s is a JSON %s, want %s", lit, kind, want)
		}
	}
	return fmt.Sprintf("a JSON %s, want %s", kind, want)
}

// goType names a Go type the way a user thinks of the JSON value.
func goType(t reflect.Type) string {
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		// Decoded from a JSON string whatever its kind (a switch state is a uint8).
		return "a string"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer (" + t.Kind().String() + ")"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return goType(t.Elem())
	}
	return "a JSON value of Go type " + t.String()
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// literalBefore returns the JSON literal that ends at off (a string with its quotes, a number,
// true, false, null), shortened to 40 characters, or "" when there is none.
func literalBefore(data []byte, off int64) string {
	end := int(min(max(off, 0), int64(len(data))))
	if end == 0 {
		return ""
	}
	start := end
	if data[end-1] == '"' {
		start = end - 1
		for start > 0 {
			start--
			if data[start] == '"' && (start == 0 || data[start-1] != '\\') {
				break
			}
		}
	} else {
		for start > 0 && bytes.IndexByte([]byte("0123456789+-.eEtruefalsn"), data[start-1]) >= 0 {
			start--
		}
	}
	return Shorten(string(data[start:end]))
}

// Shorten cuts s to 40 characters (37 and "...") for an error message, so that a huge value
// given in a file is not echoed whole.
func Shorten(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return s
}

// At is err placed at byte off of data under field: "line L, column C: field F: err", the form of
// Describe's messages, for an error that encoding/json cannot place (one returned by a
// json.Unmarshaler, whose offsets are relative to its own bytes; add them to the value's start,
// which Find gives).
func At(data []byte, off int64, field string, err error) error {
	line, col := Position(data, off)
	return fmt.Errorf("line %d, column %d: field %s: %w", line, col, field, err)
}

// Place puts err, returned while decoding data, at its line and column when it is the error of
// a value that decodes itself (a json.Unmarshaler or encoding.TextUnmarshaler, which
// encoding/json does not place): of the values along patterns (Find's) it takes the first in the
// file that check refuses with err's own message, and names the field as encoding/json would,
// the pattern's keys joined by dots. encoding/json returns such an error at once, so the first
// refused value is the one that stopped it. When check's error points inside the value (it has
// an InnerOffset method, found with errors.As: a byte of the value's own text, as a
// json.Unmarshaler's offsets are), the position is that byte's rather than the value's start.
// Syntax and type errors, which the decoder places itself, and an error no value matches, are
// returned as they are.
func Place(data []byte, err error, patterns [][]string, check func(raw []byte) error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if err == nil || errors.As(err, &se) || errors.As(err, &te) {
		return err
	}
	best, field := int64(-1), ""
	var bestErr error
	for _, p := range patterns {
		off, ferr := Find(data, p, check)
		if ferr == nil || ferr.Error() != err.Error() || best >= 0 && off > best {
			continue
		}
		var keys []string
		for _, k := range p {
			if k != "[]" {
				keys = append(keys, k)
			}
		}
		best, field, bestErr = off, strings.Join(keys, "."), ferr
	}
	if best < 0 {
		return err
	}
	var inner interface{ InnerOffset() int64 }
	if errors.As(bestErr, &inner) {
		best += inner.InnerOffset()
	}
	return At(data, best, field, err)
}

// Find walks data, one JSON value, along pattern and returns the offset of the first value in
// document order that lies there and that check refuses, with check's error; the error is nil
// when no value fails check (or data is not valid JSON before one does). pattern names
// object keys, matched as encoding/json matches a key to a field name (exactly or without case:
// strings.EqualFold is the same fold), and "[]" for every element of an array, so
// {"circuits", "[]", "path", "[]"} is every traversal of every circuit. encoding/json decodes a
// file in document order and stops at the first error a json.Unmarshaler returns, so the value
// Find returns for that Unmarshaler's check is the one that stopped the decoder.
func Find(data []byte, pattern []string, check func(raw []byte) error) (off int64, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	off, err = find(dec, data, pattern, check)
	if err == errMalformed {
		return 0, nil
	}
	return off, err
}

// errMalformed stops find where data is not valid JSON: a decoder that has failed reports More
// forever, so a loop over an array or object would not end.
var errMalformed = errors.New("jsonerr: malformed JSON")

// find reads the value the decoder is at (Token or Decode's next) along pattern.
func find(dec *json.Decoder, data []byte, pattern []string, check func([]byte) error) (int64, error) {
	// Token leaves the offset just after what it read: the value begins after the whitespace,
	// comma or colon that separates it.
	start := dec.InputOffset()
	for start < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,:"), data[start]) >= 0 {
		start++
	}
	skip := func() (int64, error) {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, errMalformed
		}
		if len(pattern) > 0 {
			return 0, nil
		}
		if err := check(raw); err != nil {
			return start, err
		}
		return 0, nil
	}
	want := byte('{')
	switch {
	case len(pattern) == 0:
		return skip()
	case pattern[0] == "[]":
		want = '['
	}
	if start >= int64(len(data)) || data[start] != want {
		return skip()
	}
	if _, err := dec.Token(); err != nil {
		return 0, errMalformed
	}
	for dec.More() {
		if want == '{' {
			key, err := dec.Token()
			if err != nil {
				return 0, errMalformed
			}
			if k, _ := key.(string); !strings.EqualFold(k, pattern[0]) {
				// Not on the pattern: read as a whole and passed over.
				var raw json.RawMessage
				if dec.Decode(&raw) != nil {
					return 0, errMalformed
				}
				continue
			}
		}
		if off, err := find(dec, data, pattern[1:], check); err != nil {
			return off, err
		}
	}
	// The closing bracket; a decoder that fails here fails the caller's next read as well.
	_, _ = dec.Token()
	return 0, nil
}

// Position converts a byte offset into a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
