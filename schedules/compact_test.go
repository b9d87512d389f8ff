package schedules

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// genFileSchedule draws a schedule on a Beneš fabric or a crossbar whose circuits have physical
// paths, and now and then an absent path or a hop list that is not a physical path (a file being
// verified), so that both spellings of version 2 circuits are exercised.
func genFileSchedule(t *rapid.T) *Schedule {
	k := rapid.IntRange(1, 6).Draw(t, "k")
	n := 1 << k
	fabric := rapid.SampledFrom([]FabricKind{Benes, Crossbar}).Draw(t, "fabric")
	mode := rapid.SampledFrom([]Mode{Partial, Barrier}).Draw(t, "mode")
	s := &Schedule{Version: FormatVersion, Algorithm: "gen", N: n, Ports: n, Fabric: fabric, Mode: mode,
		Params: Params{BandwidthBytesPerSecond: 1e9, ReconfigSeconds: 1e-6}}
	fab, _ := benes.New(n)
	for i := range rapid.IntRange(0, 40).Draw(t, "circuits") {
		src, dst := rapid.IntRange(0, n-1).Draw(t, "src"), rapid.IntRange(0, n-1).Draw(t, "dst")
		c := Circuit{Src: src, Dst: dst, Bytes: rapid.Int64Range(0, 1<<40).Draw(t, "bytes"), Group: i / 3, Path: benes.EmptyPath()}
		if fabric == Benes {
			c.Path = fab.NewPath(src, dst, rapid.Uint32().Draw(t, "choices"))
		}
		switch rapid.IntRange(0, 9).Draw(t, "odd") {
		case 0:
			c.Path = benes.Path{}
		case 1:
			c.Path = benes.PathOf([]benes.Traversal{{Stage: 0, Switch: 0, In: 0, Out: 1}})
		case 2:
			c.Path = fab.NewPath((src+1)%n, dst, 0) // a physical path, but not from c's source
		}
		if rapid.Bool().Draw(t, "planned") {
			a, b := float64(i), float64(i)+0.5
			c.PlannedStart, c.PlannedEnd = &a, &b
		}
		s.Circuits = append(s.Circuits, c)
	}
	if mode == Barrier {
		for g := range s.Groups() {
			s.Rounds = append(s.Rounds, Round{Group: g, PlannedDuration: float64(g) + 0.25})
		}
	}
	return s
}

// A version 2 file decodes to exactly the Schedule its version 1 file decodes to, streamed or
// whole, and the version 1 text of the decoded schedule is the original's.
func TestCompactRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genFileSchedule(t)
		var v1, v2 bytes.Buffer
		if err := s.WriteVersion(&v1, FormatVersion); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteVersion(&v2, CompactFormatVersion); err != nil {
			t.Fatal(err)
		}
		want, err := ReadSchedule(bytes.NewReader(v1.Bytes()), "v1.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []any{bytes.NewReader(v2.Bytes()), onlyReader{bytes.NewReader(v2.Bytes())}} {
			got, err := ReadSchedule(r.(interface{ Read([]byte) (int, error) }), "v2.json")
			if err != nil {
				t.Fatalf("%T: %v\n%s", r, err, v2.String())
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%T: v2 decodes to %+v, v1 to %+v", r, got, want)
			}
		}
		whole, err := decodeSchedule(v2.Bytes(), "v2.json")
		if err != nil || !reflect.DeepEqual(whole, want) {
			t.Fatalf("whole-file decoder: %v, %+v", err, whole)
		}
		var again bytes.Buffer
		if err := want.WriteJSON(&again); err != nil || !bytes.Equal(again.Bytes(), v1.Bytes()) {
			t.Fatalf("version 1 text changed by the round trip (%v)", err)
		}
	})
}

// compactJSON is a valid version 2 file of a 4-port Beneš fabric with one circuit 0→3 by the
// lower subnetwork; edit makes hostile variants of it.
const compactJSON = `{"version":2,"algorithm":"hand","n":4,"ports":4,"fabric":"benes","mode":"partial",` +
	`"params":{"bandwidth_bytes_per_second":1,"reconfig_seconds":0.5},` +
	`"circuits":[{"src":0,"dst":3,"bytes":1,"group":0,"choices":1,"planned_start":0,"planned_end":1}]}`

// Every hostile version 2 file is refused, streamed or whole, with one line naming the file, the
// field and the value.
func TestReadCompactRejectsHostileFiles(t *testing.T) {
	s, err := ReadSchedule(strings.NewReader(compactJSON), "s.json")
	if err != nil {
		t.Fatalf("the valid base file is refused: %v", err)
	}
	fab, _ := benes.New(4)
	if want := fab.NewPath(0, 3, 1); !s.Circuits[0].Path.Equal(want) || s.Version != FormatVersion {
		t.Fatalf("read path %v (version %d), want %v", s.Circuits[0].Path, s.Version, want)
	}
	for _, c := range []struct{ name, in, want string }{
		{"choices too large", edit(compactJSON, `"choices":1`, `"choices":2`), "field circuits[0].choices: 2 is not in [0, 2), the choices of a 4-port Beneš fabric (k−1 = 1 bits)"},
		{"negative choices", edit(compactJSON, `"choices":1`, `"choices":-1`), "field circuits[0].choices: -1 is not in [0, 2)"},
		{"choices beyond int64", edit(compactJSON, `"choices":1`, `"choices":99999999999999999999`), "field circuits.choices: value 99999999999999999999 is out of range for an integer (int64)"},
		{"choices as a string", edit(compactJSON, `"choices":1`, `"choices":"1"`), `field circuits.choices: value "1" is a JSON string, want an integer (int64)`},
		{"fractional choices", edit(compactJSON, `"choices":1`, `"choices":0.5`), "field circuits.choices: value 0.5 is not an integer (int64)"},
		{"choices and a path", edit(compactJSON, `"choices":1`, `"choices":1,"path":[]`), "field circuits[0]: both choices (1) and a path are given"},
		{"choices on a crossbar", edit(compactJSON, `"benes"`, `"crossbar"`), "field circuits[0].choices: 1 on a crossbar"},
		{"src outside the fabric", edit(compactJSON, `"src":0`, `"src":4`), "field circuits[0].choices: 1 for a circuit 4→3, whose ports are not both in [0, 4)"},
		{"negative dst", edit(compactJSON, `"dst":3`, `"dst":-1`), "field circuits[0].choices: 1 for a circuit 0→-1"},
		{"n not a power of two", edit(compactJSON, `"n":4,"ports":4`, `"n":6,"ports":6`), "field n:"},
		{"unknown field", edit(compactJSON, `"choices":1`, `"choice":1`), `unknown field "choice"`},
		{"version 3", edit(compactJSON, `"version":2`, `"version":3`, `"choices":1`, `"path":[]`), "field version: 3 is not supported (this build reads versions 1 and 2)"},
		{"version 1 with choices", edit(compactJSON, `"version":2`, `"version":1`), `unknown field "choices"`},
		{"trailing", compactJSON + "]", "trailing data after the schedule object"},
		{"group above limit", edit(compactJSON, `"group":0`, `"group":4611686018427387904`), "field circuits[0].group: 4611686018427387904 is above the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []func() *strings.Reader{func() *strings.Reader { return strings.NewReader(c.in) }} {
				for _, in := range []any{r(), onlyReader{r()}} {
					_, err := ReadSchedule(in.(interface{ Read([]byte) (int, error) }), "s.json")
					if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "s.json: ") || strings.Contains(err.Error(), "\n") {
						t.Fatalf("%T: error %v, want one line from s.json containing %q", in, err, c.want)
					}
				}
			}
		})
	}
}

// The version 2 text of a dense Beneš schedule is several times smaller than version 1's.
func TestCompactIsSmaller(t *testing.T) {
	fab, _ := benes.New(64)
	s := &Schedule{Version: FormatVersion, Algorithm: "hand", N: 64, Ports: 64, Fabric: Benes, Mode: Partial}
	for i := range 4096 {
		s.Circuits = append(s.Circuits, Circuit{Src: i % 64, Dst: i / 64, Bytes: 1 << 20, Group: i / 64, Path: fab.NewPath(i%64, i/64, uint32(i))})
	}
	var v1, v2 bytes.Buffer
	if s.WriteVersion(&v1, 1) != nil || s.WriteVersion(&v2, 2) != nil {
		t.Fatal("write")
	}
	if r := float64(v1.Len()) / float64(v2.Len()); r < 5 {
		t.Errorf("version 1 %d bytes, version 2 %d: ratio %.2f, want at least 5", v1.Len(), v2.Len(), r)
	}
	t.Logf("64 ports, 4096 circuits: version 1 %d bytes, version 2 %d bytes, ratio %.2f", v1.Len(), v2.Len(), float64(v1.Len())/float64(v2.Len()))
}
