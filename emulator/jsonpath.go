package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// decodeStrict decodes the single JSON value in b into v, refusing unknown fields and trailing
// data. On failure the error names the offending value inside the document and the value
// itself, so that a hand-edited or foreign file is fixed at the right place. A value of the
// wrong kind and a switch state that is neither "bar" nor "cross" are named as the schedule
// and timeline readers name them, by line, column and field (line 7, column 50: field
// timeline.switch_changes.to: switch state "diagonal" is not "bar" or "cross"); an unknown
// field by its path with indices (timeline.circuits[1].colour), which encoding/json does not
// give.
func decodeStrict(b []byte, v any) error {
	err := strictUnmarshal(b, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *trailingError
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("line %d: %w", lineAt(b, se.Offset), err)
	case errors.As(err, &te):
		return fmt.Errorf("line %d: %w", lineAt(b, te.offset+1), err)
	case errors.As(err, &ute) && ute.Field != "":
		// A whole file of the wrong kind (Field "") keeps its message below.
		return jsonerr.Describe(b, err)
	}
	if placed := schedules.PlaceSwitchStates(b, err, "timeline"); placed != err {
		return placed
	}
	path, raw, leaf := locate(b, reflect.TypeOf(v), "")
	if path == "" {
		return err
	}
	if raw != nil {
		return fmt.Errorf("field %s = %s: %w", path, clip(raw), leaf)
	}
	return fmt.Errorf("field %s: %w", path, leaf)
}

// trailingError is data after the one JSON value a file holds (a stray "]]]").
type trailingError struct{ offset int64 }

func (e *trailingError) Error() string { return "data after the JSON value" }

// lineAt is the 1-based line of byte offset off (the byte before it) in b.
func lineAt(b []byte, off int64) int {
	off = max(0, min(off-1, int64(len(b))))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if rest := b[dec.InputOffset():]; len(bytes.TrimSpace(rest)) > 0 {
		return &trailingError{dec.InputOffset() + int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n")))}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// locate walks b along t and returns the path of the first value (object keys in sorted order)
// that does not decode into its Go type, with the value (nil for an unknown field) and its own
// error. An empty path means b as a whole is the culprit.
func locate(b []byte, t reflect.Type, path string) (string, []byte, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	leaf := func() (string, []byte, error) {
		return path, b, strictUnmarshal(b, reflect.New(t).Interface())
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return leaf()
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil {
			return leaf()
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fieldType(t, k)
			sub := joinPath(path, k)
			if !ok {
				return sub, nil, errors.New("unknown field")
			}
			if strictUnmarshal(obj[k], reflect.New(ft).Interface()) != nil {
				return locate(obj[k], ft, sub)
			}
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			return leaf()
		}
		for i, e := range elems {
			if strictUnmarshal(e, reflect.New(t.Elem()).Interface()) != nil {
				return locate(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil {
			return leaf()
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strictUnmarshal(obj[k], reflect.New(t.Elem()).Interface()) != nil {
				return locate(obj[k], t.Elem(), joinPath(path, k))
			}
		}
	}
	return leaf()
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldType is the type of t's field that encoding/json fills from key (its tag name, or its Go
// name, matched without case as encoding/json does), through embedded structs.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	var fold reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if sub, ok := fieldType(ft, key); ok {
					return sub, true
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type, true
		}
		if fold == nil && strings.EqualFold(name, key) {
			fold = f.Type
		}
	}
	return fold, fold != nil
}

// clip shortens a value for an error message.
func clip(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
