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
func WriteTimelines(ctx context.Context, dir string, recs []Record, exec emulator.Config, tool string, inputs []provenance.Input) error {
	for i := range recs {
		if recs[i].Timeline == nil {
			return fmt.Errorf("run %s was not kept (Config.KeepRuns)", recs[i].Name())
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prev, err := ReadTimelinesManifest(dir)
	if err != nil {
		return fmt.Errorf("%w (remove it, or write into another directory)", err)
	}
	m := TimelinesManifest{Version: TimelinesManifestVersion, Tool: tool, Inputs: inputs}
	for i := range recs {
		name := recs[i].Name()
		m.Files = append(m.Files, name+".schedule.json", name+".timeline.json", name+".trace.json")
	}
	mpath := filepath.Join(dir, TimelinesManifestName)
	if err := safefile.WriteJSON(mpath, &m); err != nil {
		return err
	}
	if prev != nil {
		var protect []string
		for _, in := range inputs {
			if in.Path != "" {
				protect = append(protect, in.Path)
			}
		}
		if _, err := outdir.Clean(dir, prev.Files, m.Files, protect); err != nil {
			return err
		}
	}
	for i := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &recs[i]
		base := filepath.Join(dir, r.Name())
		// Streamed (Schedule.WriteJSON), and hashed on the way for the record's schedule_sha256.
		h := sha256.New()
		if err := safefile.WriteStream(base+".schedule.json", func(w io.Writer) error {
			return r.Schedule.WriteJSON(io.MultiWriter(w, h))
		}); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.RunRecord(exec, tool, inputs)
		rec.ScheduleFile, rec.ScheduleSHA256 = r.Name()+".schedule.json", hex.EncodeToString(h.Sum(nil))
		if err := rec.Write(base + ".timeline.json"); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := safefile.WriteStream(base+".trace.json", func(w io.Writer) error {
			return emulator.WriteChromeTrace(w, r.Schedule, r.Timeline)
		}); err != nil {
			return err
		}
	}
	m.Complete = true
	return safefile.WriteJSON(mpath, &m)
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
		r := &recs[i]
		if r.Timeline == nil {
			return fmt.Errorf("run %s was not kept (Config.KeepRuns)", r.Name())
		}
		out := path
		if len(recs) > 1 {
			ext := filepath.Ext(path)
			out = strings.TrimSuffix(path, ext) + "-" + r.Name() + ext
		}
		var b bytes.Buffer
		if err := plot.Gantt(&b, format, r.Schedule, r.Timeline); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		if err := safefile.WriteFile(out, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
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
