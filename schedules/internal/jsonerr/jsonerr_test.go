package jsonerr

import (
	"encoding/json"
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
