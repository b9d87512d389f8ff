package schedules

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The fuzzers check that no input panics or hangs the schedule and timeline readers or the
// checks that run on what they accept, and that an accepted schedule survives a write and a
// read unchanged. Seeds are the valid files of hostile_test.go and the small timeline below.

func FuzzReadSchedule(f *testing.F) {
	f.Add([]byte(scheduleJSON))
	f.Add([]byte(barrierJSON))
	f.Add([]byte(strings.Replace(scheduleJSON, `"crossbar"`, `"benes"`, 1)))
	// Beneš paths on 4 ports: a physical one (held compact) and a broken one (kept as read).
	f.Add([]byte(edit(scheduleJSON, `"n":2,"ports":2,"fabric":"crossbar"`, `"n":4,"ports":4,"fabric":"benes"`,
		`"path":[]`, `"path":[[0,0,0,0],[1,0,0,0],[2,0,0,1]]},{"src":1,"dst":0,"bytes":1,"group":0,"path":[[0,0,1,1],[1,1,0,0],[2,1,1,0]]`)))
	// Traversals that do not decode, placed at their line and column.
	f.Add([]byte(strings.Replace(traversalFile, "BAD", `[2, "x", 1, 0]`, 1)))
	f.Add([]byte(strings.Replace(traversalFile, "BAD", "[2, 1,\n 1]", 1)))
	// Version 2: choices, a choices-less path, and choices out of range.
	f.Add([]byte(compactJSON))
	f.Add([]byte(edit(compactJSON, `"choices":1`, `"path":[[0,0,0,1],[1,1,0,1],[2,1,0,1]]`)))
	f.Add([]byte(edit(compactJSON, `"choices":1`, `"choices":7`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSchedule(bytes.NewReader(data), "f.json")
		// Streamed or not, the result is the whole-file decoder's, value and error alike.
		want, werr := decodeSchedule(data, "f.json")
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !reflect.DeepEqual(s, want) {
			t.Fatalf("ReadSchedule gave %v (%v), the whole-file decoder %v (%v)", s, err, want, werr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a reader error spans lines: %q", err)
			}
			if te := (*benes.TraversalError)(nil); errors.As(err, &te) && !strings.Contains(err.Error(), ": field circuits.path: traversal ") {
				t.Fatalf("a bad traversal is not placed in the file: %q", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ReadSchedule accepted a file Validate refuses: %v", err)
		}
		vs := CheckStatic(s)
		if len(vs) == 0 && s.Ports <= 64 {
			d := NewDemand(s.Ports)
			for _, c := range s.Circuits {
				d.Bytes[c.Src][c.Dst] += c.Bytes
			}
			_ = Verify(s, d)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadSchedule(bytes.NewReader(b), "again.json")
		if err != nil {
			t.Fatalf("a written schedule does not read back: %v\n%s", err, b)
		}
		if b2, _ := json.Marshal(back); !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the schedule:\n%s\n%s", b, b2)
		}
		// Its version 2 file decodes to the same schedule.
		var v2 bytes.Buffer
		if err := s.WriteVersion(&v2, CompactFormatVersion); err != nil {
			t.Fatal(err)
		}
		if back, err := ReadSchedule(bytes.NewReader(v2.Bytes()), "v2.json"); err != nil || !reflect.DeepEqual(back, s) {
			t.Fatalf("version 2 round trip: %v\n%s", err, v2.String())
		}
	})
}

const timelineJSON = `{"circuits":[{"circuit":0,"ready":0,"path_ready":0,"reconfig_start":0,"transmit_start":0,"end":1}],` +
	`"switch_changes":[{"stage":0,"switch":0,"from":"bar","to":"cross","start":1,"end":2}]}`

func FuzzReadTimeline(f *testing.F) {
	f.Add([]byte(timelineJSON))
	f.Add([]byte(`{"circuits":[],"switch_changes":[]}`))
	s, err := ReadSchedule(strings.NewReader(strings.Replace(scheduleJSON, `"crossbar"`, `"benes"`, 1)), "s.json")
	if err != nil {
		f.Fatal(err)
	}
	s.Circuits[0].Path = benes.Path{}
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := ReadTimeline(bytes.NewReader(data), "f.json")
		if err != nil {
			return
		}
		if err := tl.checkTimes(); err != nil {
			t.Fatalf("ReadTimeline accepted times it refuses: %v", err)
		}
		_ = VerifyTimeline(s, tl)
		_ = tl.Completion()
	})
}

func TestReadTimelineHostile(t *testing.T) {
	if _, err := ReadTimeline(strings.NewReader(timelineJSON), "t.json"); err != nil {
		t.Fatalf("valid timeline refused: %v", err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"unknown state", strings.Replace(timelineJSON, `"to":"cross"`, `"to":"diagonal"`, 1), `switch state "diagonal" is not "bar" or "cross"`},
		{"unknown field", strings.Replace(timelineJSON, `"ready"`, `"redy"`, 1), `unknown field "redy"`},
		{"trailing data", timelineJSON + "]", "line 1, column 186: trailing data after the timeline object"},
		{"time 1e308", strings.Replace(timelineJSON, `"end":1}`, `"end":1e308}`, 1), "field circuits[0].end = 1e+308 s is above the limit of 1e+06 s"},
		{"negative change", strings.Replace(timelineJSON, `"start":1`, `"start":-1`, 1), "field switch_changes[0].start = -1 s is negative"},
		{"circuit as a string", strings.Replace(timelineJSON, `"circuit":0`, `"circuit":"0"`, 1), `field circuits.circuit: value "0" is a JSON string, want an integer (int)`},
	} {
		_, err := ReadTimeline(strings.NewReader(c.in), "t.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "t.json: ") {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
