package schedules

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// onlyReader hides a reader's Seek: ReadSchedule must then keep a copy of what it read for the
// whole-file decoder.
type onlyReader struct{ io.Reader }

// readInputs are files the streaming decoder accepts and files it must hand to the whole-file
// decoder (every hostile case, odd keys, nulls, repeats).
func readInputs() map[string]string {
	return map[string]string{
		"partial":             scheduleJSON,
		"barrier":             barrierJSON,
		"indented":            strings.ReplaceAll(strings.ReplaceAll(barrierJSON, ",", ",\n  "), "{", "{\n "),
		"circuits null":       edit(scheduleJSON, `"circuits":[{"src":0,"dst":1,"bytes":1,"group":0,"path":[],"planned_start":0,"planned_end":1}]`, `"circuits":null`),
		"circuits empty":      edit(scheduleJSON, `"circuits":[{"src":0,"dst":1,"bytes":1,"group":0,"path":[],"planned_start":0,"planned_end":1}]`, `"circuits":[]`),
		"circuit null":        edit(scheduleJSON, `"circuits":[`, `"circuits":[null,`),
		"circuits first":      `{"circuits":[{"src":0,"dst":1,"bytes":1,"group":0,"path":[]}],` + scheduleJSON[1:strings.Index(scheduleJSON, `,"circuits"`)] + "}",
		"repeated key":        edit(scheduleJSON, `"n":2,`, `"n":4,"n":2,`),
		"repeated circuits":   edit(scheduleJSON, `"circuits":`, `"circuits":[],"circuits":`),
		"cased key":           edit(scheduleJSON, `"algorithm"`, `"Algorithm"`),
		"unknown field":       edit(scheduleJSON, `"algorithm"`, `"algorithmz"`),
		"unknown in circuit":  edit(scheduleJSON, `"src":0`, `"src":0,"x":1`),
		"benes paths":         edit(scheduleJSON, `"n":2,"ports":2,"fabric":"crossbar"`, `"n":4,"ports":4,"fabric":"benes"`, `"path":[]`, `"path":[[0,0,0,0],[1,0,0,0],[2,0,0,1]]},{"src":1,"dst":0,"bytes":1,"group":0,"path":[[0,0,1,1],[1,1,0,0],[2,1,1,0]]`),
		"bad traversal":       strings.Replace(traversalFile, "BAD", `[2, "x", 1, 0]`, 1),
		"trailing":            scheduleJSON + "]]]",
		"second object":       scheduleJSON + "\n{}",
		"truncated":           scheduleJSON[:100],
		"bytes as a string":   edit(scheduleJSON, `"bytes":1`, `"bytes":"1"`),
		"n as a string":       edit(scheduleJSON, `"n":2`, `"n":"4"`),
		"top-level null":      "null",
		"top-level array":     "[]",
		"empty":               "",
		"group above limit":   edit(scheduleJSON, `"group":0`, `"group":4611686018427387904`),
		"version 2":           edit(scheduleJSON, `"version":1`, `"version":2`),
		"params null":         edit(scheduleJSON, `"params":{"bandwidth_bytes_per_second":1,"reconfig_seconds":0.5}`, `"params":null`),
		"circuits a number":   edit(scheduleJSON, `"circuits":[`, `"circuits":3,"x":[`),
		"syntax in a circuit": edit(scheduleJSON, `"src":0,`, `"src":0,,`),
	}
}

// TestReadScheduleStreamsLikeWholeFile: on every input, streamed or not, seekable or not,
// ReadSchedule returns what the whole-file decoder does, value and error alike.
func TestReadScheduleStreamsLikeWholeFile(t *testing.T) {
	for name, in := range readInputs() {
		t.Run(name, func(t *testing.T) {
			want, werr := decodeSchedule([]byte(in), "s.json")
			for _, r := range []io.Reader{strings.NewReader(in), onlyReader{strings.NewReader(in)}} {
				got, err := ReadSchedule(r, "s.json")
				if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
					t.Fatalf("%T: error %v, want %v", r, err, werr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%T: read %+v, want %+v", r, got, want)
				}
			}
		})
	}
}

// TestReadScheduleSeeksFromItsStart: a reader positioned inside a larger stream is read from
// where it stands, also when the whole-file decoder has to go back for an error.
func TestReadScheduleSeeksFromItsStart(t *testing.T) {
	prefix := "garbage before the file"
	for _, in := range []string{scheduleJSON, scheduleJSON + "]]]"} {
		r := strings.NewReader(prefix + in)
		if _, err := r.Seek(int64(len(prefix)), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSchedule(r, "s.json")
		want, werr := decodeSchedule([]byte(in), "s.json")
		if !reflect.DeepEqual(got, want) || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("read %v (%v), want %v (%v)", got, err, want, werr)
		}
	}
}

// failAfter returns its reader's bytes up to n, then err.
type failAfter struct {
	r   io.Reader
	n   int
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	k, err := f.r.Read(p[:min(len(p), f.n)])
	f.n -= k
	return k, err
}

// A file that cannot be read is reported with the read's error, not a JSON one.
func TestReadScheduleReportsReadErrors(t *testing.T) {
	boom := errors.New("device unplugged")
	_, err := ReadSchedule(&failAfter{r: strings.NewReader(scheduleJSON), n: 50, err: boom}, "s.json")
	if !errors.Is(err, boom) || err.Error() != "s.json: device unplugged" {
		t.Fatalf("error %v, want s.json: %v", err, boom)
	}
}

// heapAtEOF is a file reader that, when the file is all read, records the live heap. It seeks,
// as a file does (a reader that cannot is copied as it is read, for the whole-file decoder).
type heapAtEOF struct {
	f    *os.File
	heap uint64
}

func (h *heapAtEOF) Read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	if err == io.EOF && h.heap == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.heap = ms.HeapAlloc
	}
	return n, err
}

func (h *heapAtEOF) Seek(off int64, whence int) (int64, error) { return h.f.Seek(off, whence) }

// TestReadScheduleStreams reads a 64-port Beneš schedule of 40 000 circuits (about 30 MB of
// text) from a file and looks at the live heap when the reader reaches the end of the file: a
// reader that holds the text (as io.ReadAll then decoding did) has all of it live then; a
// streaming one holds the compact schedule (about 80 bytes a circuit) and one buffer.
func TestReadScheduleStreams(t *testing.T) {
	fab, err := benes.New(64)
	if err != nil {
		t.Fatal(err)
	}
	s := &Schedule{Version: FormatVersion, Algorithm: "hand", N: 64, Ports: 64, Fabric: Benes, Mode: Barrier,
		Params: Params{BandwidthBytesPerSecond: 1e9}}
	times := make([]float64, 2*40000)
	for i := range 40000 {
		src, dst := i%64, (i*7+i/64)%64
		times[2*i], times[2*i+1] = float64(i), float64(i+1)
		s.Circuits = append(s.Circuits, Circuit{Src: src, Dst: dst, Bytes: int64(i + 1), Group: i / 64,
			Path: fab.NewPath(src, dst, uint32(i)), PlannedStart: &times[2*i], PlannedEnd: &times[2*i+1]})
	}
	path := filepath.Join(t.TempDir(), "s.json")
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	size := buf.Len()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	buf = bytes.Buffer{}
	s, times = nil, nil
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	r := &heapAtEOF{f: f}
	got, err := ReadSchedule(r, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Circuits) != 40000 || got.Circuits[39999].Bytes != 40000 {
		t.Fatalf("read %d circuits", len(got.Circuits))
	}
	live := int64(r.heap) - int64(before.HeapAlloc)
	if live > int64(size)/4 {
		t.Errorf("%d bytes live at the end of a %d-byte file: the text is held, not streamed", live, size)
	}
	t.Logf("file %d bytes, live heap at its end %d bytes", size, live)
}
