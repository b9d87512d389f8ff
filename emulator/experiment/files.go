package experiment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/outdir"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

// TimelinesManifestName is the manifest WriteTimelines leaves in its directory.
const TimelinesManifestName = "timelines.json"

// TimelinesManifestVersion is the version of the timelines.json file.
const TimelinesManifestVersion = 1

// TimelinesManifest is timelines.json: which build wrote the files beside it, from which inputs,
// and whether the write finished. Its Files are the outputs a rerun into the same directory
// replaces or removes.
type TimelinesManifest struct {
	Version int                `json:"version"`
	Tool    string             `json:"tool"`
	Inputs  []provenance.Input `json:"inputs"`
	// Complete is false from the moment WriteTimelines starts until every file is written.
	Complete bool     `json:"complete"`
	Files    []string `json:"files"`
}

// ReadTimelinesManifest reads dir's timelines.json; a directory without one has none (nil, nil).
func ReadTimelinesManifest(dir string) (*TimelinesManifest, error) {
	path := filepath.Join(dir, TimelinesManifestName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m TimelinesManifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Version != TimelinesManifestVersion {
		return nil, fmt.Errorf("%s: field version: %d is not supported (this build reads version %d)", path, m.Version, TimelinesManifestVersion)
	}
	return &m, nil
}

// WriteTimelines writes into dir (created if missing), per run kept with Config.KeepRuns,
// <name>.schedule.json (the schedule), <name>.timeline.json (its emulator.RunRecord, written by
// tool from inputs under exec) and <name>.trace.json (its Chrome trace, for Perfetto); <name> is
// Record.Name.
//
// Beside them goes timelines.json (TimelinesManifest), written first marked incomplete and
// listing every file to come, and again marked complete once they are all written. Before the
// runs' files, the files an earlier WriteTimelines listed there that this one does not write are
// removed (never one of inputs). When ctx is cancelled WriteTimelines stops between two files and
// returns ctx's error; each file written is whole and the manifest says the set is incomplete.
//
// WriteTimelines is NewTimelineWriter, Write for each record, then Close: a caller that streams
// the runs (Config.Stream) uses those as each run finishes, so that no run is kept to the end.
func WriteTimelines(ctx context.Context, dir string, recs []Record, exec emulator.Config, tool string, inputs []provenance.Input) error {
	names := make([]string, len(recs))
	for i := range recs {
		if recs[i].Timeline == nil {
			return fmt.Errorf("run %s was not kept (Config.KeepRuns)", recs[i].Name())
		}
		names[i] = recs[i].Name()
	}
	w, err := NewTimelineWriter(dir, names, exec, tool, inputs)
	if err != nil {
		return err
	}
	for i := range recs {
		if err := w.Write(ctx, &recs[i]); err != nil {
			return err
		}
	}
	return w.Close()
}

// TimelineWriter writes WriteTimelines' files one run at a time.
type TimelineWriter struct {
	dir    string
	exec   emulator.Config
	tool   string
	inputs []provenance.Input
	m      TimelinesManifest
}

// NewTimelineWriter prepares dir for the runs named names (Record.Name), in the order their files
// are listed: it writes the manifest marked incomplete and removes what an earlier write listed
// and this one does not (see WriteTimelines).
func NewTimelineWriter(dir string, names []string, exec emulator.Config, tool string, inputs []provenance.Input) (*TimelineWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	prev, err := ReadTimelinesManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("%w (remove it, or write into another directory)", err)
	}
	w := &TimelineWriter{dir: dir, exec: exec, tool: tool, inputs: inputs,
		m: TimelinesManifest{Version: TimelinesManifestVersion, Tool: tool, Inputs: inputs}}
	for _, name := range names {
		w.m.Files = append(w.m.Files, name+".schedule.json", name+".timeline.json", name+".trace.json")
	}
	if err := safefile.WriteJSON(w.manifestPath(), &w.m); err != nil {
		return nil, err
	}
	if prev != nil {
		var protect []string
		for _, in := range inputs {
			if in.Path != "" {
				protect = append(protect, in.Path)
			}
		}
		if _, err := outdir.Clean(dir, prev.Files, w.m.Files, protect); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *TimelineWriter) manifestPath() string { return filepath.Join(w.dir, TimelinesManifestName) }

// Write writes r's three files (r kept with Config.KeepRuns). When ctx is cancelled it stops
// between two files and returns ctx's error.
func (w *TimelineWriter) Write(ctx context.Context, r *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.Timeline == nil {
		return fmt.Errorf("run %s was not kept (Config.KeepRuns)", r.Name())
	}
	base := filepath.Join(w.dir, r.Name())
	// Streamed (Schedule.WriteJSON), and hashed on the way for the record's schedule_sha256.
	h := sha256.New()
	if err := safefile.WriteStream(base+".schedule.json", func(out io.Writer) error {
		return r.Schedule.WriteJSON(io.MultiWriter(out, h))
	}); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rec := r.RunRecord(w.exec, w.tool, w.inputs)
	rec.ScheduleFile, rec.ScheduleSHA256 = r.Name()+".schedule.json", hex.EncodeToString(h.Sum(nil))
	if err := rec.Write(base + ".timeline.json"); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return safefile.WriteStream(base+".trace.json", func(out io.Writer) error {
		return emulator.WriteChromeTrace(out, r.Schedule, r.Timeline)
	})
}

// Close marks the manifest complete: call it once every run is written.
func (w *TimelineWriter) Close() error {
	w.m.Complete = true
	return safefile.WriteJSON(w.manifestPath(), &w.m)
}

// WriteGantts draws a Gantt chart (plot.Gantt, format "svg" or "png") per run kept with
// Config.KeepRuns: to path itself for a single run, else to path with "-" and the run's Name
// before the extension.
//
// When ctx is cancelled it stops between two charts and returns ctx's error.
func WriteGantts(ctx context.Context, path, format string, recs []Record) error {
	for i := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := WriteGantt(path, format, &recs[i], len(recs) > 1); err != nil {
			return err
		}
	}
	return nil
}

// WriteGantt draws r's chart as WriteGantts does, to path itself unless several says it is one
// of several runs (then to path with "-" and r's Name before the extension).
func WriteGantt(path, format string, r *Record, several bool) error {
	if r.Timeline == nil {
		return fmt.Errorf("run %s was not kept (Config.KeepRuns)", r.Name())
	}
	out := path
	if several {
		ext := filepath.Ext(path)
		out = strings.TrimSuffix(path, ext) + "-" + r.Name() + ext
	}
	var b bytes.Buffer
	if err := plot.Gantt(&b, format, r.Schedule, r.Timeline); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	return safefile.WriteFile(out, b.Bytes())
}

// Name is a file-name-safe name for the run: m<index>-<algorithm> ("schedule-<algorithm>" for a
// schedule run without its demand).
func (r *Record) Name() string {
	m := "schedule"
	if r.Matrix.Index >= 0 {
		m = "m" + strconv.Itoa(r.Matrix.Index)
	}
	alg := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, r.Algorithm)
	return m + "-" + alg
}
