package jsonerr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type doc struct {
	N     int            `json:"n"`
	Bytes int64          `json:"bytes"`
	Rate  float64        `json:"rate"`
	Name  string         `json:"name"`
	Path  []int          `json:"path"`
	Opts  map[string]int `json:"opts"`
	On    bool           `json:"on"`
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"n": "4"}`, `line 1, column 10: field n: value "4" is a JSON string, want an integer (int)`},
		{`{"bytes": 99999999999999999999}`, "field bytes: value 99999999999999999999 is out of range for an integer (int64)"},
		{`{"n": 1.5}`, "field n: value 1.5 is not an integer (int)"},
		{`{"rate": "fast"}`, `field rate: value "fast" is a JSON string, want a number`},
		{`{"name": 7}`, "field name: value 7 is not a string"},
		{`{"path": {}}`, "field path: a JSON object, want an array"},
		{`{"opts": []}`, "field opts: a JSON array, want an object"},
		{`{"on": null, "n": true}`, "field n: value true is a JSON bool, want an integer (int)"},
		{`{"name": "` + strings.Repeat("x", 500) + `", "n": "` + strings.Repeat("y", 500) + `"}`, `field n: value "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy... is a JSON string`},
		{"{\n\"n\": 1,\n\"n\" 2}", "line 3, column 6: malformed JSON: invalid character '2' after object key"},
		{`{"n": 1`, "line 1: truncated file"},
		{`{"n": 1} x`, "line 1, column 10: trailing data after the JSON value"},
		{`{"m": 1}`, `unknown field "m"`},
	} {
		dec := json.NewDecoder(strings.NewReader(c.in))
		dec.DisallowUnknownFields()
		var d doc
		err := dec.Decode(&d)
		if err == nil {
			var rest json.RawMessage
			err = json.Unmarshal([]byte(c.in), &rest)
		}
		got := Describe([]byte(c.in), err)
		if !strings.Contains(got.Error(), c.want) || strings.Contains(got.Error(), "\n") || len(got.Error()) > 200 {
			t.Errorf("%.60q: %q, want one short line containing %q", c.in, got, c.want)
		}
	}
}

// Find returns the first value on the pattern, in document order, that check refuses, at the
// offset of its first byte; keys match as encoding/json matches field names; values off the
// pattern (other keys, other kinds) are passed over.
func TestFind(t *testing.T) {
	pattern := []string{"a", "[]", "b", "[]"}
	isBad := func(raw []byte) error {
		if strings.Contains(string(raw), "bad") {
			return errors.New("bad " + string(raw))
		}
		return nil
	}
	for _, c := range []struct {
		in, want string // want: the text from the offset found, "" for none
	}{
		{`{"a": [{"b": [1, "bad1"]}, {"b": ["bad2"]}]}`, `"bad1"]}, {"b": ["bad2"]}]}`},
		{`{"a": [{"b": [1]}, {"c": ["bad0"], "b": [2, {"x": "bad2"}]}]}`, `{"x": "bad2"}]}]}`},
		{"{\"A\":\n[{\"B\" :\t[ \"bad3\" ]}]}", `"bad3" ]}]}`},
		{`{"a": [{"b": "bad"}, {"b": {"0": "bad"}}, "bad", {"b": null}], "x": {"a": [{"b": ["bad"]}]}}`, ""},
		{`{"a": [{"b": [1]}], "a": [{"b": ["bad5"]}]}`, `"bad5"]}]}`},
		{`["bad"]`, ""},
		{`{"a": [{"b": ["ok"]`, ""},
		{`{"a": [{"b": [1], "a": [{"b": ["bad"]}]}]}`, ""},
		// Malformed inside the pattern: Find gives up rather than reading on (a decoder that
		// has failed reports More forever).
		{`{"a": [{"b": [1, tru]}]}`, ""},
		{`{"a": [{"b": [1,, "bad"]}]}`, ""},
		{`{"a": [x, {"b": ["bad"]}]}`, ""},
		{`{"a": [{"b" 1}]}`, ""},
	} {
		off, err := Find([]byte(c.in), pattern, isBad)
		got := ""
		if err != nil {
			got = c.in[off:]
			if !strings.HasPrefix(err.Error(), "bad ") || !strings.HasPrefix(got, strings.TrimPrefix(err.Error(), "bad ")) {
				t.Errorf("%q: check's error %q is not for the value at %d", c.in, err, off)
			}
		}
		if got != c.want {
			t.Errorf("%q: found %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

// At places an error under a field at a byte offset, in Describe's words, and keeps it for errors.Is.
func TestAt(t *testing.T) {
	inner := errors.New("traversal [1]: too short")
	err := At([]byte("{\n  \"path\": [[1]]}"), 13, "circuits.path", inner)
	if err.Error() != "line 2, column 12: field circuits.path: traversal [1]: too short" || !errors.Is(err, inner) {
		t.Fatalf("%v", err)
	}
}

// word is a value that decodes itself from a JSON string, as a switch state does.
type word string

func (w *word) UnmarshalText(b []byte) error {
	if string(b) != "ok" {
		return errors.New("word " + string(b) + " is not ok")
	}
	*w = word(b)
	return nil
}

func TestPlace(t *testing.T) {
	type item struct {
		A word `json:"a"`
		B word `json:"b"`
	}
	type file struct {
		Items []item `json:"items"`
		N     int    `json:"n"`
	}
	check := func(raw []byte) error {
		var w word
		return json.Unmarshal(raw, &w)
	}
	patterns := [][]string{{"items", "[]", "a"}, {"items", "[]", "b"}}
	for _, c := range []struct{ name, in, want string }{
		{"a", "{\"items\": [\n {\"a\": \"ok\", \"b\": \"ok\"},\n {\"a\": \"no\"}]}", `line 3, column 8: field items.a: word no is not ok`},
		{"b first", "{\"items\": [\n {\"b\": \"no\"},\n {\"a\": \"no\"}]}", `line 2, column 8: field items.b: word no is not ok`},
		// The decoder places a type error itself: Place leaves it to Describe.
		{"type", `{"items": [{"a": 1}]}`, `line 1, column 19: field items.a: value 1 is not a string`},
		{"syntax", `{"items": [}`, `line 1, column 13: malformed JSON: invalid character '}' looking for beginning of value`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.in)
			var f file
			err := json.Unmarshal(data, &f)
			if err == nil {
				t.Fatal("decoded")
			}
			if got := Describe(data, Place(data, err, patterns, check)); got.Error() != c.want {
				t.Errorf("got  %v\nwant %s", got, c.want)
			}
		})
	}
	// An error that no value along the patterns gives is returned as it is.
	other := errors.New("word no is not ok")
	if got := Place([]byte(`{"n": 1}`), other, patterns, check); got != other {
		t.Errorf("Place without a match: %v", got)
	}
	if got := Place([]byte(`{}`), nil, patterns, check); got != nil {
		t.Errorf("Place(nil): %v", got)
	}
}

// innerErr points at a byte inside the value that check refused.
type innerErr struct{ off int64 }

func (e innerErr) Error() string      { return "bad digit" }
func (e innerErr) InnerOffset() int64 { return e.off }

func TestPlaceInnerOffset(t *testing.T) {
	data := []byte("{\"xs\": [\n  \"12\",\n  \"3x4\"]}")
	check := func(raw []byte) error {
		if i := strings.IndexByte(string(raw), 'x'); i >= 0 {
			return innerErr{int64(i)}
		}
		return nil
	}
	// The value "3x4" starts at column 3 of line 3; its 'x' is 2 bytes in.
	want := "line 3, column 5: field xs: bad digit"
	if got := Place(data, innerErr{2}, [][]string{{"xs", "[]"}}, check); got.Error() != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
}
