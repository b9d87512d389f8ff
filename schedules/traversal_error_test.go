package schedules

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// traversalFile is a hand-written 4-port Beneš schedule, one traversal list per line, whose
// second circuit's third traversal is BAD (line 7, from column 41).
const traversalFile = `{"version": 1, "algorithm": "hand", "n": 4, "ports": 4, "fabric": "benes", "mode": "partial",
 "params": {"bandwidth_bytes_per_second": 1, "reconfig_seconds": 0},
 "circuits": [
  {"src": 0, "dst": 1, "bytes": 1, "group": 0,
   "path": [[0, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 1]]},
  {"src": 1, "dst": 2, "bytes": 1, "group": 0,
   "path": [[0, 0, 1, 1], [1, 1, 0, 1], BAD]}
 ]}`

// A traversal that does not decode is named at its line and column in the file, under the
// field name encoding/json gives the hop lists elsewhere (circuits.path, as in "path as an
// object" of the hostile files), with the traversal and the offending value. The column follows
// encoding/json's convention for the rest of the file: just after a wrong literal, just after the
// bracket of a wrong object or array, and at the traversal's start for the wrong length.
func TestReadScheduleNamesBadTraversalInFile(t *testing.T) {
	valid := strings.Replace(traversalFile, "BAD", "[2, 1, 1, 0]", 1)
	if _, err := ReadSchedule(strings.NewReader(valid), "s.json"); err != nil {
		t.Fatalf("the valid base file is refused: %v", err)
	}
	const pre = "s.json: line 7, column "
	for _, c := range []struct{ name, bad, want string }{
		{"beyond int", "[2, 99999999999999999999, 0, 1]", pre + "65: field circuits.path: traversal [2, 99999999999999999999, 0, 1]: value 99999999999999999999 is out of range for an integer (int)"},
		{"beyond int64 by one", "[2, 1, 1, 9223372036854775808]", pre + "70: field circuits.path: traversal [2, 1, 1, 9223372036854775808]: value 9223372036854775808 is out of range for an integer (int)"},
		// Cut to 40 characters; "not an integer" is what Describe says of a huge number in any field
		// (the cut value's "..." reads as a fraction).
		{"huge number", "[2, 1, 1, " + strings.Repeat("9", 400) + "]", pre + "451: field circuits.path: traversal [2, 1, 1, 999999999999999999999999999...: value 9999999999999999999999999999999999999... is not an integer (int)"},
		{"float", "[2, 1, 1, 1.5]", pre + "54: field circuits.path: traversal [2, 1, 1, 1.5]: value 1.5 is not an integer (int)"},
		{"exponent", "[2, 1, 1e3, 0]", pre + "51: field circuits.path: traversal [2, 1, 1e3, 0]: value 1e3 is not an integer (int)"},
		{"negative zero float", "[2, 1, 1, -0.0]", pre + "55: field circuits.path: traversal [2, 1, 1, -0.0]: value -0.0 is not an integer (int)"},
		{"string element", `[2, "x", 1, 0]`, pre + `48: field circuits.path: traversal [2, "x", 1, 0]: value "x" is a JSON string, want an integer (int)`},
		{"bool element", "[2, 1, 1, true]", pre + "55: field circuits.path: traversal [2, 1, 1, true]: value true is a JSON bool, want an integer (int)"},
		{"null", "null", pre + "41: field circuits.path: traversal null: want 4 integers [stage, switch, in_lane, out_lane], not null"},
		{"too few", "[2, 1, 1]", pre + "41: field circuits.path: traversal [2, 1, 1]: want 4 integers [stage, switch, in_lane, out_lane], got 3"},
		{"too many", "[2, 1, 1, 0, 0]", pre + "41: field circuits.path: traversal [2, 1, 1, 0, 0]: want 4 integers [stage, switch, in_lane, out_lane], got 5"},
		{"empty", "[]", pre + "41: field circuits.path: traversal []: want 4 integers [stage, switch, in_lane, out_lane], got 0"},
		{"object", `{"stage": 2}`, pre + `42: field circuits.path: traversal {"stage": 2}: a JSON object, want an array`},
		{"nested array", "[2, [1], 1, 0]", pre + "46: field circuits.path: traversal [2, [1], 1, 0]: a JSON array, want an integer (int)"},
		{"object element", "[2, 1, 1, {}]", pre + "52: field circuits.path: traversal [2, 1, 1, {}]: a JSON object, want an integer (int)"},
		{"string", `"[2,1,1,0]"`, pre + `52: field circuits.path: traversal "[2,1,1,0]": value "[2,1,1,0]" is a JSON string, want an array`},
		{"number", "7", pre + "42: field circuits.path: traversal 7: value 7 is not an array"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSchedule(strings.NewReader(strings.Replace(traversalFile, "BAD", c.bad, 1)), "s.json")
			if err == nil || err.Error() != c.want {
				t.Fatalf("error\n  %v\nwant\n  %s", err, c.want)
			}
			var te *benes.TraversalError
			if !errors.As(err, &te) {
				t.Fatalf("%v does not wrap a *benes.TraversalError", err)
			}
		})
	}
}

// The traversal is found wherever the decoder met it: across lines as the writer lays a file
// out, under keys that encoding/json matches without case, in a repeated "circuits" key, and
// not in a field the decoder passes over.
func TestReadSchedulePlacesBadTraversalAnywhere(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"written layout", "{\n \"version\": 1, \"algorithm\": \"a\", \"n\": 4, \"ports\": 4, \"fabric\": \"benes\", \"mode\": \"partial\",\n" +
			" \"params\": {\"bandwidth_bytes_per_second\": 1, \"reconfig_seconds\": 0},\n \"circuits\": [\n  {\n   \"src\": 0,\n   \"dst\": 1,\n   \"bytes\": 1,\n   \"group\": 0,\n" +
			"   \"path\": [\n    [\n     0,\n     0,\n     0,\n     0\n    ],\n    [\n     1,\n     \"0\",\n     0,\n     0\n    ]\n   ]\n  }\n ]\n}\n",
			"s.json: line 19, column 9: field circuits.path: traversal [1,\"0\",0,0]: value \"0\" is a JSON string, want an integer (int)"},
		{"keys in another case", edit(traversalFile, `"circuits"`, `"Circuits"`, `"path": [[0, 0, 1`, `"PATH": [[0, 0, 1`, "BAD", "[2, 1, 1]"),
			"s.json: line 7, column 41: field circuits.path: traversal [2, 1, 1]: want 4 integers [stage, switch, in_lane, out_lane], got 3"},
		{"second circuits key", edit(traversalFile, `"params"`, `"circuits": [{"path": [[0,0,0,0]]}], "params"`, "BAD", "[2, 1, 1]"),
			"s.json: line 7, column 41: field circuits.path: traversal [2, 1, 1]: want 4 integers [stage, switch, in_lane, out_lane], got 3"},
		{"skipped fields", edit(traversalFile, `"params"`, `"x": {"circuits": [{"path": [[1]]}]}, "algorithm": "[[1]]", "params"`, "BAD", "[2, 1, 1]"),
			"s.json: line 7, column 41: field circuits.path: traversal [2, 1, 1]: want 4 integers [stage, switch, in_lane, out_lane], got 3"},
		{"second path key", edit(traversalFile, `"group": 0,
   "path": [[0, 0, 1`, `"group": 0, "path": [[0,0,0,0]],
   "path": [[0, 0, 1`, "BAD", `[2, 1, 1, "1"]`),
			`s.json: line 7, column 54: field circuits.path: traversal [2, 1, 1, "1"]: value "1" is a JSON string, want an integer (int)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSchedule(strings.NewReader(c.in), "s.json")
			if err == nil || err.Error() != c.want {
				t.Fatalf("error\n  %q\nwant\n  %q", err, c.want)
			}
		})
	}
	// A bad traversal in a field the decoder does not know is that field's error, as before.
	_, err := ReadSchedule(strings.NewReader(edit(scheduleJSON, `"path":[]`, `"path":[],"paths":[[1]]`)), "s.json")
	if err == nil || err.Error() != `s.json: unknown field "paths"` {
		t.Fatalf("error %v, want the unknown field", err)
	}
}
