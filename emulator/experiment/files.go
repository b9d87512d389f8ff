package experiment

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

// WriteTimelines writes into dir (created if missing), per run kept with Config.KeepRuns,
// <name>.schedule.json (the schedule), <name>.timeline.json (its emulator.RunRecord, written by
// tool from inputs under exec) and <name>.trace.json (its Chrome trace, for Perfetto); <name> is
// Record.Name.
func WriteTimelines(dir string, recs []Record, exec emulator.Config, tool string, inputs []provenance.Input) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range recs {
		r := &recs[i]
		if r.Timeline == nil {
			return fmt.Errorf("run %s was not kept (Config.KeepRuns)", r.Name())
		}
		base := filepath.Join(dir, r.Name())
		if err := safefile.WriteStream(base+".schedule.json", r.Schedule.WriteJSON); err != nil {
			return err
		}
		if err := r.RunRecord(exec, tool, inputs).Write(base + ".timeline.json"); err != nil {
			return err
		}
		if err := safefile.WriteStream(base+".trace.json", func(w io.Writer) error {
			return emulator.WriteChromeTrace(w, r.Schedule, r.Timeline)
		}); err != nil {
			return err
		}
	}
	return nil
}

// WriteGantts draws a Gantt chart (plot.Gantt, format "svg" or "png") per run kept with
// Config.KeepRuns: to path itself for a single run, else to path with "-" and the run's Name
// before the extension.
func WriteGantts(path, format string, recs []Record) error {
	for i := range recs {
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
