package emulator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/tetris-hil/tetris-hil/internal/jsonw"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// RunRecordVersion is the version of the run-record file this build writes. Version 1 (written
// by emulate --timeline before records carried their source, tool, inputs and models) is read
// too.
const RunRecordVersion = 2

// Sources of a run record.
const (
	SourceEmulator = "emulator" // executed in virtual time by Run
	SourceLive     = "live"     // executed on real GPUs (and switches) by the live runner
)

// MatrixRef says which matrix of a demand file a run served: its index in the file (−1 for a
// schedule executed without its demand), its MoE layer (−1 without trace metadata), phase,
// dataset and a label for people.
type MatrixRef struct {
	Index   int    `json:"index"`
	Layer   int    `json:"layer"`
	Phase   string `json:"phase,omitempty"`
	Dataset string `json:"dataset,omitempty"`
	Label   string `json:"label,omitempty"`
}

// RunRecord is the file form of one execution of one schedule, emulated or live: what ran
// (algorithm, matrix, inputs with their SHA-256, tool version), under which timing models, and
// what happened (Result and per-circuit Timeline). emulate --timeline writes one per run;
// verify --timeline and the live runner's replay read and write the same type.
type RunRecord struct {
	Version int `json:"version"`
	// Source is SourceEmulator or SourceLive.
	Source string `json:"source,omitempty"`
	// Tool is the build that produced the record (provenance.Tool).
	Tool string `json:"tool,omitempty"`
	// Inputs are the files the run read, with their digests.
	Inputs    []provenance.Input `json:"inputs,omitempty"`
	Algorithm string             `json:"algorithm"`
	Matrix    MatrixRef          `json:"matrix"`
	// TransferModel and ReconfigModel name the timing models (live: what was measured and how
	// reconfiguration was injected or driven).
	TransferModel string `json:"transfer_model,omitempty"`
	ReconfigModel string `json:"reconfig_model,omitempty"`
	// ScheduleFile and ScheduleSHA256 name the schedule the run executed: the file written
	// beside the record (emulate --timeline's <name>.schedule.json, relative to the record's
	// directory) and ScheduleDigest of its contents, so that a record checked against another
	// schedule is told apart from a schedule that ran wrongly. Absent in older records.
	ScheduleFile   string  `json:"schedule_file,omitempty"`
	ScheduleSHA256 string  `json:"schedule_sha256,omitempty"`
	Result         *Result `json:"result"`
	// StateChangesMax and StateChangesPerSwitch are the run's switch state changes switch by
	// switch (switch wear, Tetris §5): the most-changed switch's count, and every switch that
	// changed as [stage, index, count] by stage then index (a crossbar's transmitters at stage
	// −1), summing to Result.StateChanges (SwitchChanges). emulate --timeline writes them; they
	// are absent in older records, in live ones and where nothing changed.
	StateChangesMax       int                 `json:"state_changes_max,omitempty"`
	StateChangesPerSwitch []SwitchCount       `json:"state_changes_per_switch,omitempty"`
	Timeline              *schedules.Timeline `json:"timeline"`
}

// Write writes the record to path (safefile rules: a reader never sees half a file), streamed as
// WriteJSON writes it. A record that cannot be encoded (a NaN or infinite time, an invalid switch
// state) is refused before path is opened, so a device or FIFO at path receives nothing.
func (r *RunRecord) Write(path string) error {
	head, err := r.encodeHead()
	if err != nil {
		// Worded as safefile's own refusal of a value it cannot encode.
		return fmt.Errorf("run record: writing %s: %w", path, err)
	}
	if err := safefile.WriteStream(path, func(w io.Writer) error { return r.writeJSON(w, head) }); err != nil {
		return fmt.Errorf("run record: %w", err)
	}
	return nil
}

// WriteJSON writes the record's file form: exactly the bytes of json.MarshalIndent(r, "", " ")
// followed by a newline (what safefile.WriteJSON wrote), with the timeline written element by
// element, so that the record of a run of millions of circuits and switch changes costs one
// element's text in memory beyond the record itself, not the whole file (0.9 GB of text for a
// Birkhoff–von Neumann run on a dense 128-port demand) and encoding/json's buffers besides.
//
// As json.Marshal does, it refuses a NaN or infinite float with a *json.UnsupportedValueError
// and an invalid switch state with a *json.MarshalerError, the first in the order Marshal would
// meet them; it checks everything before writing anything, so a refused record leaves nothing
// half-written on w.
func (r *RunRecord) WriteJSON(w io.Writer) error {
	head, err := r.encodeHead()
	if err != nil {
		return err
	}
	return r.writeJSON(w, head)
}

// encodeHead marshals the record without its timeline (the last field: the text ends in
// "timeline": null) and returns that text up to the null, after checking that the timeline can be
// encoded. A nil record marshals, as before, to null.
func (r *RunRecord) encodeHead() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	bare := *r
	bare.Timeline = nil
	head, err := json.MarshalIndent(&bare, "", " ")
	if err != nil {
		return nil, err
	}
	// Timeline is the last field, without omitempty, and nil here: the text always ends so (the
	// stream property test compares the whole text with MarshalIndent's).
	const tail = "null\n}"
	if err := checkTimelineJSON(r.Timeline); err != nil {
		return nil, err
	}
	return head[:len(head)-len(tail)], nil
}

// checkTimelineJSON returns the error json.Marshal gives for the first value of tl it cannot
// encode. The scan compares floats and states only; the element that fails is marshalled alone
// for the error, which is then the very one marshalling the whole record gave.
func checkTimelineJSON(tl *schedules.Timeline) error {
	if tl == nil {
		return nil
	}
	fails := func(v any) error {
		if _, err := json.Marshal(v); err != nil {
			return err
		}
		return fmt.Errorf("run record: %+v was refused by the scan but marshals", v)
	}
	for i := range tl.Circuits {
		c := &tl.Circuits[i]
		for _, f := range [...]float64{c.Ready, c.PathReady, c.ReconfigStart, c.TransmitStart, c.End} {
			if jsonw.CheckFloat(f) != nil {
				return fails(c)
			}
		}
	}
	for i := range tl.SwitchChanges {
		sc := &tl.SwitchChanges[i]
		if !validState(sc.From) || !validState(sc.To) || jsonw.CheckFloat(sc.Start) != nil || jsonw.CheckFloat(sc.End) != nil {
			return fails(sc)
		}
	}
	return nil
}

func validState(s benes.State) bool { return s == benes.Bar || s == benes.Cross }

// writeJSON writes head (encodeHead's text), the timeline and the record's end.
func (r *RunRecord) writeJSON(w io.Writer, head []byte) error {
	e := jsonw.NewStream(w)
	e.B = append(e.B, head...)
	if r != nil {
		writeTimeline(e, r.Timeline)
		e.Str("\n}")
	}
	e.Str("\n")
	e.Flush()
	return e.Err
}

// writeTimeline appends tl to e as MarshalIndent writes it as the value of a top-level field
// (one level deep, one space per level). Run records and Chrome traces go through a buffered
// jsonw.Stream, so that files of millions of elements never have their text held whole.
func writeTimeline(e *jsonw.Stream, tl *schedules.Timeline) {
	if tl == nil {
		e.Str("null")
		return
	}
	e.Str("{\n  \"circuits\": ")
	jsonw.Array(e, tl.Circuits, "\n  ]", func(c *schedules.CircuitTiming) {
		e.Str("\n   {\n    \"circuit\": ")
		e.Int(c.Circuit)
		e.Str(",\n    \"ready\": ")
		e.Float(c.Ready)
		e.Str(",\n    \"path_ready\": ")
		e.Float(c.PathReady)
		e.Str(",\n    \"reconfig_start\": ")
		e.Float(c.ReconfigStart)
		e.Str(",\n    \"transmit_start\": ")
		e.Float(c.TransmitStart)
		e.Str(",\n    \"end\": ")
		e.Float(c.End)
		e.Str("\n   }")
	})
	e.Str(",\n  \"switch_changes\": ")
	jsonw.Array(e, tl.SwitchChanges, "\n  ]", func(sc *schedules.SwitchChange) {
		// States are valid here (checkTimelineJSON): their text is "bar" or "cross".
		e.Str("\n   {\n    \"stage\": ")
		e.Int(int(sc.Stage))
		e.Str(",\n    \"switch\": ")
		e.Int(int(sc.Switch))
		e.Str(",\n    \"from\": \"")
		e.Str(sc.From.String())
		e.Str("\",\n    \"to\": \"")
		e.Str(sc.To.String())
		e.Str("\",\n    \"start\": ")
		e.Float(sc.Start)
		e.Str(",\n    \"end\": ")
		e.Float(sc.End)
		e.Str("\n   }")
	})
	e.Str("\n }")
}

// ReadRunRecord reads a run record; name prefixes every error. Unknown fields, trailing data and
// values of the wrong kind are errors naming the field and the value, and where encoding/json
// or jsonerr.Place can place it the line and column (line 10, column 51: field
// timeline.switch_changes.to: switch state "diagonal" is not "bar" or "cross"), so that a
// misspelt or foreign field is noticed rather than read as zero.
func ReadRunRecord(r io.Reader, name string) (*RunRecord, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return parseRunRecord(b, name)
}

func parseRunRecord(b []byte, name string) (*RunRecord, error) {
	// The version first, so that a record of a newer format is reported as such and not by the
	// first field this build does not know.
	var probe struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err == nil && probe.Version != nil {
		var v int
		if err := json.Unmarshal(probe.Version, &v); err != nil || v < 1 || v > RunRecordVersion {
			return nil, fmt.Errorf("%s: field version = %s: not supported (this build reads versions 1..%d)", name, clip(probe.Version), RunRecordVersion)
		}
	}
	var rec RunRecord
	if err := decodeStrict(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if rec.Version < 1 || rec.Version > RunRecordVersion {
		return nil, fmt.Errorf("%s: field version: %d is not supported (this build reads versions 1..%d)", name, rec.Version, RunRecordVersion)
	}
	switch rec.Source {
	case "", SourceEmulator, SourceLive:
	default:
		return nil, fmt.Errorf("%s: field source: %q is neither %q nor %q", name, rec.Source, SourceEmulator, SourceLive)
	}
	if rec.Timeline == nil {
		return nil, fmt.Errorf("%s: field timeline: missing", name)
	}
	if err := rec.checkSwitchCounts(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkTimelineTimes(rec.Timeline); err != nil {
		return nil, fmt.Errorf("%s: field %w", name, err)
	}
	return &rec, nil
}

// checkSwitchCounts holds a record's per-switch counts, when it has them, to what a run writes:
// positive counts of distinct switches in stage-then-index order, the largest StateChangesMax,
// summing to the result's StateChanges.
func (r *RunRecord) checkSwitchCounts() error {
	if r.StateChangesPerSwitch == nil && r.StateChangesMax == 0 {
		return nil
	}
	sum, most := 0, 0
	for i, c := range r.StateChangesPerSwitch {
		if c.Count < 1 || c.Stage < -1 || c.Index < 0 {
			return fmt.Errorf("field state_changes_per_switch[%d]: [%d, %d, %d] is not a switch that changed", i, c.Stage, c.Index, c.Count)
		}
		if i > 0 {
			p := r.StateChangesPerSwitch[i-1]
			if c.Stage < p.Stage || c.Stage == p.Stage && c.Index <= p.Index {
				return fmt.Errorf("field state_changes_per_switch[%d]: switch %d:%d after %d:%d (want stage, then index, ascending)", i, c.Stage, c.Index, p.Stage, p.Index)
			}
		}
		if c.Count > math.MaxInt-sum {
			return fmt.Errorf("field state_changes_per_switch[%d]: count %d overflows the sum", i, c.Count)
		}
		sum += c.Count
		most = max(most, c.Count)
	}
	if most != r.StateChangesMax {
		return fmt.Errorf("field state_changes_max: %d, but the most-changed switch of state_changes_per_switch changes %d times", r.StateChangesMax, most)
	}
	if r.Result != nil && sum != r.Result.StateChanges {
		return fmt.Errorf("field state_changes_per_switch: the switches' changes sum to %d, the result's state_changes is %d", sum, r.Result.StateChanges)
	}
	return nil
}

// checkTimelineTimes holds every time of a record's timeline to the model's limit
// (schedules.CheckSeconds), as schedules.ReadTimeline does for a bare timeline.
func checkTimelineTimes(tl *schedules.Timeline) error {
	for i, c := range tl.Circuits {
		for _, f := range []struct {
			name string
			v    float64
		}{{"ready", c.Ready}, {"path_ready", c.PathReady}, {"reconfig_start", c.ReconfigStart}, {"transmit_start", c.TransmitStart}, {"end", c.End}} {
			if err := schedules.CheckSeconds(fmt.Sprintf("timeline.circuits[%d].%s", i, f.name), f.v); err != nil {
				return err
			}
		}
	}
	for i, ch := range tl.SwitchChanges {
		if err := schedules.CheckSeconds(fmt.Sprintf("timeline.switch_changes[%d].start", i), ch.Start); err != nil {
			return err
		}
		if err := schedules.CheckSeconds(fmt.Sprintf("timeline.switch_changes[%d].end", i), ch.End); err != nil {
			return err
		}
	}
	return nil
}

// LoadRunRecord reads the run record at path.
func LoadRunRecord(path string) (*RunRecord, error) {
	f, err := readlimit.Open(context.Background(), path, readlimit.Timeline)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadRunRecord(f, path)
}

// LoadTimeline reads the timeline of a run record (a JSON object with a "timeline" field) or a
// bare schedules.Timeline, from any producer.
func LoadTimeline(path string) (*schedules.Timeline, error) {
	tl, _, err := LoadTimelineRecord(path)
	return tl, err
}

// LoadTimelineRecord is LoadTimeline that also returns the run record (nil for a bare timeline),
// e.g. for RunRecord.CheckSchedule.
func LoadTimelineRecord(path string) (*schedules.Timeline, *RunRecord, error) {
	b, err := readlimit.ReadFile(context.Background(), path, readlimit.Timeline)
	if err != nil {
		return nil, nil, err
	}
	var probe map[string]json.RawMessage
	if err := decodeStrict(b, &probe); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := probe["timeline"]; ok {
		rec, err := parseRunRecord(b, path)
		if err != nil {
			return nil, nil, err
		}
		return rec.Timeline, rec, nil
	}
	// A bare timeline: the model's strict reader, which also holds every time to its limit.
	tl, err := schedules.ReadTimeline(bytes.NewReader(b), path)
	if err != nil {
		return nil, nil, err
	}
	return tl, nil, nil
}

// ScheduleDigest is the hex SHA-256 of a schedule's canonical file form (Schedule.WriteJSON,
// what emulate --timeline writes beside each record): two files that parse to the same schedule
// have the same digest however they were formatted. The schedule is hashed as it is encoded,
// never held as text.
func ScheduleDigest(s *schedules.Schedule) (string, error) {
	h := sha256.New()
	if err := s.WriteJSON(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrOtherSchedule is wrapped by CheckSchedule's error for a record of another schedule.
var ErrOtherSchedule = errors.New("the timeline belongs to another schedule")

// CheckSchedule reports whether the record, read from recordPath, is the run of schedule s read
// from schedulePath. Where the record names its schedule (ScheduleSHA256, or in older records
// the SHA-256 of an input in role "schedule") and s is another, the error (wrapping
// ErrOtherSchedule) says which schedule the timeline belongs to, rather than leaving the verifier
// to list every circuit as missing or misplaced. A record that names no schedule passes.
func (r *RunRecord) CheckSchedule(recordPath string, s *schedules.Schedule, schedulePath string) error {
	var where, want, got string
	var err error
	switch {
	case r.ScheduleSHA256 != "":
		where, want = r.ScheduleFile, r.ScheduleSHA256
		if where != "" && !filepath.IsAbs(where) {
			where = filepath.Join(filepath.Dir(recordPath), where)
		}
		if got, err = ScheduleDigest(s); err != nil {
			return err
		}
	default:
		for _, in := range r.Inputs {
			if in.Role == "schedule" && in.SHA256 != "" {
				where, want = in.Path, in.SHA256
			}
		}
		if want == "" {
			return nil
		}
		if got, err = provenance.SHA256(schedulePath); err != nil {
			return err
		}
	}
	if got == want {
		return nil
	}
	if where == "" {
		where = "another schedule"
	}
	what := r.Algorithm
	switch {
	case r.Matrix.Index >= 0:
		what += fmt.Sprintf(" on matrix %d", r.Matrix.Index)
	case r.Matrix.Label != "":
		what += " on " + r.Matrix.Label
	}
	return fmt.Errorf("%w: %s is the run of %s (%s, sha256 %.12s…), not of %s (sha256 %.12s…)",
		ErrOtherSchedule, recordPath, where, what, want, schedulePath, got)
}
