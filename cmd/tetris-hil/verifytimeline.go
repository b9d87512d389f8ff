package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// timelineOf refuses a timeline that cannot be of schedule s (another number of circuits): the
// per-circuit checks would list every circuit as missing or unknown, where the user needs to
// hear that the files do not belong together, and whose run the timeline is.
func timelineOf(path, schedulePath string, s *schedules.Schedule, tl *schedules.Timeline) error {
	if len(tl.Circuits) == len(s.Circuits) {
		return nil
	}
	whose := ""
	if b, err := os.ReadFile(path); err == nil {
		var rec struct {
			Algorithm string `json:"algorithm"`
			Matrix    *struct {
				Index int    `json:"index"`
				Label string `json:"label"`
			} `json:"matrix"`
		}
		if json.Unmarshal(b, &rec) == nil && rec.Algorithm != "" {
			whose = fmt.Sprintf("; its run record says %s", rec.Algorithm)
			if rec.Matrix != nil {
				whose += fmt.Sprintf(" on matrix %d (%s)", rec.Matrix.Index, rec.Matrix.Label)
			}
		}
	}
	return usagef("--timeline %q: times %d circuits, but %s (%s) has %d: the timeline is of another schedule%s",
		path, len(tl.Circuits), schedulePath, s.Algorithm, len(s.Circuits), whose)
}

// isRoutingLog says whether the file's content is token-routing JSONL (trace.DetectFormat on its
// first 4 KiB).
func isRoutingLog(path string) bool {
	f, err := readlimit.Open(context.Background(), path, readlimit.Demand)
	if err != nil {
		return false // the import itself reports the file (missing, a FIFO, too large)
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	return trace.DetectFormat(path, head[:n]) == trace.FormatRouting
}

// demandName names the demand in messages: "--demand FILE", or the built-in trace when no
// --demand was given (not "--demand " and nothing).
func demandName(path string) string {
	if path == "" {
		return "the " + trace.DefaultName
	}
	return "--demand " + path
}
