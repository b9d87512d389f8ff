package schedules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// marshalled is the schedule file as it was written before WriteJSON: json.MarshalIndent and a
// newline.
func marshalled(s *schedules.Schedule) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// oddFloat draws the floats whose JSON form has caught encoders out: exponent boundaries (1e-6,
// 1e21), shortest round trips (0.1+0.2), subnormals, negative zero, extremes, and any bit pattern
// that is a finite float.
func oddFloat() *rapid.Generator[float64] {
	tenth, fifth := 0.1, 0.2 // added at run time: as constants they sum to exactly 0.3
	specials := []float64{0, math.Copysign(0, -1), 1, -1, 1e-7, 1e-6, 9.999999e-7, 1.0000001e-6, tenth + fifth, 1e20,
		1e21, 9.99999e20, 1e-300, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		100e9, 10e-6, 1e-9, 12345678.9, 1 << 53, 1<<53 + 2, 2.5e-8, -3.75e22}
	return rapid.OneOf(
		rapid.SampledFrom(specials),
		rapid.Float64(),
		rapid.Map(rapid.Uint64(), math.Float64frombits).Filter(func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }),
	)
}

// oddString draws header strings with what encoding/json escapes: quotes, backslashes, control
// characters, HTML's <, > and &, U+2028, and invalid UTF-8.
func oddString() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"", "tetris", "bvn-maxmin", "a\"b\\c", "<&>", "\u2028\u2029", "\x00\x1f\t\n", "\xff\xfe", "émigré", "Δ→∞"}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
}

// randomSchedule draws a schedule of either fabric and mode with arbitrary field values: the
// encoder must reproduce MarshalIndent for every value, not only for valid schedules.
func randomSchedule(t *rapid.T) *schedules.Schedule {
	f := oddFloat()
	s := &schedules.Schedule{
		Version:   rapid.IntRange(-2, 3).Draw(t, "version"),
		Algorithm: oddString().Draw(t, "algorithm"),
		N:         rapid.IntRange(0, 1<<20).Draw(t, "n"),
		Ports:     rapid.Int().Draw(t, "ports"),
		Fabric:    schedules.FabricKind(rapid.SampledFrom([]string{"benes", "crossbar", "x<y"}).Draw(t, "fabric")),
		Mode:      schedules.Mode(rapid.SampledFrom([]string{"partial", "barrier", ""}).Draw(t, "mode")),
		Params: schedules.Params{
			BandwidthBytesPerSecond: f.Draw(t, "bandwidth"),
			ReconfigSeconds:         f.Draw(t, "reconfig"),
		},
	}
	switch rapid.IntRange(0, 2).Draw(t, "options") {
	case 1:
		s.Params.Options = map[string]string{}
	case 2:
		s.Params.Options = rapid.MapOfN(oddString(), oddString(), 1, 6).Draw(t, "option values")
	}
	stages := rapid.IntRange(0, 9).Draw(t, "stages")
	switch rapid.IntRange(0, 3).Draw(t, "circuits") {
	case 1:
		s.Circuits = []schedules.Circuit{}
	case 2, 3:
		count := rapid.IntRange(1, 40).Draw(t, "count")
		for range count {
			c := schedules.Circuit{
				Src:   rapid.IntRange(-1, 600).Draw(t, "src"),
				Dst:   rapid.IntRange(-1, 600).Draw(t, "dst"),
				Bytes: rapid.Int64().Draw(t, "bytes"),
				Group: rapid.Int().Draw(t, "group"),
			}
			switch rapid.IntRange(0, 5).Draw(t, "path") {
			case 0: // nil: a crossbar circuit
			case 1:
				c.Path = benes.EmptyPath()
			case 2: // a physical path, held compact
				fab, err := benes.New(1 << rapid.IntRange(1, 20).Draw(t, "k"))
				if err != nil {
					t.Fatal(err)
				}
				c.Path = fab.NewPath(rapid.IntRange(0, fab.Ports()-1).Draw(t, "path src"),
					rapid.IntRange(0, fab.Ports()-1).Draw(t, "path dst"), rapid.Uint32().Draw(t, "choices"))
			default: // anything, held as given
				hops := make([]benes.Traversal, stages)
				for k := range hops {
					hops[k] = benes.Traversal{Stage: k, Switch: rapid.IntRange(-3, 1<<19).Draw(t, "switch"),
						In: rapid.IntRange(-1, 2).Draw(t, "in"), Out: rapid.IntRange(-1, 2).Draw(t, "out")}
				}
				c.Path = benes.PathOf(hops)
			}
			if rapid.Bool().Draw(t, "has start") {
				v := f.Draw(t, "start")
				c.PlannedStart = &v
			}
			if rapid.Bool().Draw(t, "has end") {
				v := f.Draw(t, "end")
				c.PlannedEnd = &v
			}
			s.Circuits = append(s.Circuits, c)
		}
	}
	switch rapid.IntRange(0, 2).Draw(t, "rounds") {
	case 1:
		s.Rounds = []schedules.Round{}
	case 2:
		s.Rounds = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) schedules.Round {
			return schedules.Round{Group: rapid.Int().Draw(t, "group"), PlannedDuration: f.Draw(t, "duration")}
		}), 1, 10).Draw(t, "round list")
	}
	return s
}

// TestWriteJSONPropertyMatchesMarshalIndent: on every schedule, WriteJSON writes the bytes that
// json.MarshalIndent plus a newline gives.
func TestWriteJSONPropertyMatchesMarshalIndent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := randomSchedule(t)
		want, err := marshalled(s)
		if err != nil {
			t.Fatalf("MarshalIndent: %v", err)
		}
		var got bytes.Buffer
		if err := s.WriteJSON(&got); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("WriteJSON differs from MarshalIndent: %s", firstDiff(got.Bytes(), want))
		}
	})
}

// TestWriteJSONPropertyRefusesNonFinite: a NaN or infinity anywhere a float goes is refused with
// the error MarshalIndent gives (the first such value in file order), and nothing is written.
func TestWriteJSONPropertyRefusesNonFinite(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := randomSchedule(t)
		var slots []*float64
		slots = append(slots, &s.Params.BandwidthBytesPerSecond, &s.Params.ReconfigSeconds)
		for i := range s.Circuits {
			c := &s.Circuits[i]
			if c.PlannedStart != nil {
				slots = append(slots, c.PlannedStart)
			}
			if c.PlannedEnd != nil {
				slots = append(slots, c.PlannedEnd)
			}
		}
		for i := range s.Rounds {
			slots = append(slots, &s.Rounds[i].PlannedDuration)
		}
		bad := rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1)})
		for range rapid.IntRange(1, 3).Draw(t, "poisoned") {
			*slots[rapid.IntRange(0, len(slots)-1).Draw(t, "slot")] = bad.Draw(t, "value")
		}
		_, want := marshalled(s)
		if want == nil {
			t.Fatal("MarshalIndent accepted a non-finite float")
		}
		var got bytes.Buffer
		err := s.WriteJSON(&got)
		var uve *json.UnsupportedValueError
		if !errors.As(err, &uve) || err.Error() != want.Error() {
			t.Fatalf("WriteJSON error %v, want %v (a *json.UnsupportedValueError)", err, want)
		}
		if got.Len() != 0 {
			t.Fatalf("WriteJSON wrote %d bytes of a schedule it refused", got.Len())
		}
	})
}

// failingWriter accepts limit bytes, then fails every write.
type failingWriter struct {
	limit, n int
}

var errFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, errFull
	}
	w.n += len(p)
	return len(p), nil
}

// TestWriteJSONWriterError: the writer's error comes back, whether it fails on the first piece
// or on a later one, and the writing stops there.
func TestWriteJSONWriterError(t *testing.T) {
	s := bigSchedule(2000)
	want, _ := marshalled(s)
	for _, limit := range []int{0, 1 << 10, 100 << 10, len(want) - 1} {
		w := &failingWriter{limit: limit}
		if err := s.WriteJSON(w); !errors.Is(err, errFull) {
			t.Errorf("writer failing after %d bytes: WriteJSON = %v, want %v", limit, err, errFull)
		}
	}
	w := &failingWriter{limit: len(want)}
	if err := s.WriteJSON(w); err != nil || w.n != len(want) {
		t.Errorf("writer with room for the file: err %v, %d bytes, want nil and %d", err, w.n, len(want))
	}
}

// bigSchedule is a valid-looking Beneš schedule of count circuits on 64 ports, large enough that
// WriteJSON flushes many times.
func bigSchedule(count int) *schedules.Schedule {
	f, _ := benes.New(64)
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "tetris", N: 64, Ports: 64,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Params: schedules.Params{BandwidthBytesPerSecond: 100e9, ReconfigSeconds: 10e-6,
			Options: map[string]string{"no-partial": "false", "naive-routing": "false"}}}
	for i := range count {
		src, dst := i%64, (i*7+1)%64
		start, end := float64(i)*1e-7, float64(i+1)*1e-7+0.1+0.2
		s.Circuits = append(s.Circuits, schedules.Circuit{Src: src, Dst: dst, Bytes: int64(i) * 4096, Group: i / 64,
			Path: f.NewPath(src, dst, uint32(i)), PlannedStart: &start, PlannedEnd: &end})
	}
	return s
}

// TestWriteJSONGolden: the schedule files kept under testdata (written by MarshalIndent when
// they were recorded) come back byte for byte after a read and WriteJSON.
func TestWriteJSONGolden(t *testing.T) {
	for _, name := range []string{"tetris/testdata/tetris_4x4.json", "tetris/testdata/tetris_8x8.json", "tetris/testdata/snb_4x4_no_partial.json"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := schedules.ReadSchedule(bytes.NewReader(want), name)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := s.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: %s", name, firstDiff(got.Bytes(), want))
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// BenchmarkWriteJSON compares the streamed writer with the MarshalIndent it replaces, on 20 000
// circuits of 64 ports (11 traversals each).
func BenchmarkWriteJSON(b *testing.B) {
	s := bigSchedule(20000)
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.WriteJSON(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshalindent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalled(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadSchedule reads back the file of BenchmarkWriteJSON's 20 000 circuits: decoding
// the traversal lists and compacting them into paths.
func BenchmarkReadSchedule(b *testing.B) {
	var buf bytes.Buffer
	if err := bigSchedule(20000).WriteJSON(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schedules.ReadSchedule(bytes.NewReader(buf.Bytes()), "s.json"); err != nil {
			b.Fatal(err)
		}
	}
}
