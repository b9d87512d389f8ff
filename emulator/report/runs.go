package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/emulator/reproduce"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
)

// Replay is a replay directory (tetris-hil replay --out): its manifest, its summary, and what the
// report draws from the live and predicted run records.
type Replay struct {
	Path                                              string // the summary, relative to the run directory
	Tool                                              string
	Inputs                                            []provenance.Input
	Reconfiguration, PredictTransfer, PredictReconfig string
	Runs                                              []ReplayRun
	// Completion (live vs predicted per run, bars) and Starts (per-circuit start differences,
	// one box per run) are the figures.
	Completion, Starts figure
	StartUnit          string
}

// ReplayRun is one replayed schedule: the summary's numbers and the live switch log.
type ReplayRun struct {
	Algorithm         string             `json:"algorithm"`
	Matrix            emulator.MatrixRef `json:"matrix"`
	Circuits          int                `json:"circuits"`
	Commands          int                `json:"commands"`
	Live              float64            `json:"completion_seconds"`
	Predicted         float64            `json:"predicted_completion_seconds"`
	LiveOverPredicted float64            `json:"live_over_predicted"`
	StartDifference   struct {
		Median float64 `json:"median"`
		P99    float64 `json:"p99"`
		Worst  float64 `json:"worst"`
	} `json:"start_difference_seconds"`
	// Switches is the live run's switch log, in order of start (up to maxSwitchRows).
	Switches []SwitchRow `json:"-"`
	// MoreSwitches counts the changes left out of Switches.
	MoreSwitches int `json:"-"`
}

// SwitchRow is one switch change of a live run; Switch names it as the CLI does ("stage:index").
type SwitchRow struct {
	Switch, From, To string
	Start, End       float64
}

// maxSwitchRows bounds the switch log shown per run: a barrier schedule at 64 ports changes
// thousands of switches, and the page is for reading.
const maxSwitchRows = 400

type replayManifest struct {
	Tool            string             `json:"tool"`
	Inputs          []provenance.Input `json:"inputs"`
	Reconfiguration string             `json:"reconfiguration"`
	PredictTransfer string             `json:"predict_transfer_model"`
	PredictReconfig string             `json:"predict_reconfig_model"`
	Runs            []struct {
		Algorithm string             `json:"algorithm"`
		Matrix    emulator.MatrixRef `json:"matrix"`
		Status    string             `json:"status"`
		Predicted string             `json:"predicted"`
		Live      string             `json:"live"`
	} `json:"runs"`
}

// isReplay tells a replay directory's summary.json: a manifest.json beside it, and runs that
// carry a predicted completion.
func isReplay(path string) bool {
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "manifest.json")); err != nil {
		return false
	}
	var s struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &s) != nil || len(s.Runs) == 0 {
		return false
	}
	_, ok := s.Runs[0]["predicted_completion_seconds"]
	return ok
}

// readReplay reads the replay directory whose summary is path (rel: relative to the report's
// directory) and draws its figures.
func readReplay(path, rel string) (*Replay, error) {
	dir := filepath.Dir(path)
	var sum struct {
		Runs []ReplayRun `json:"runs"`
	}
	var man replayManifest
	for _, f := range []struct {
		name string
		v    any
	}{{path, &sum}, {filepath.Join(dir, "manifest.json"), &man}} {
		b, err := os.ReadFile(f.name)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, f.v); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	r := &Replay{Path: rel, Tool: man.Tool, Inputs: man.Inputs, Reconfiguration: man.Reconfiguration,
		PredictTransfer: man.PredictTransfer, PredictReconfig: man.PredictReconfig, Runs: sum.Runs}
	var starts []plot.Series
	bars := plot.Bars{Title: "live vs predicted completion per replayed schedule", YLabel: "completion (ms)",
		Series: []string{"predicted (emulator)", "live"}, Values: make([][]float64, 2)}
	for i := range r.Runs {
		run := &r.Runs[i]
		name := runName(run, r.Runs)
		bars.Groups = append(bars.Groups, name)
		bars.Values[0] = append(bars.Values[0], run.Predicted*1e3)
		bars.Values[1] = append(bars.Values[1], run.Live*1e3)
		for _, m := range man.Runs {
			if m.Algorithm != run.Algorithm || m.Matrix.Index != run.Matrix.Index || m.Status != "complete" {
				continue
			}
			ds, sw, err := compareRecords(filepath.Join(dir, m.Live), filepath.Join(dir, m.Predicted))
			if err != nil {
				return nil, err
			}
			if len(ds) > 0 {
				starts = append(starts, plot.Series{Name: name, Values: ds})
			}
			run.Switches, run.MoreSwitches = sw, 0
			if len(sw) > maxSwitchRows {
				run.Switches, run.MoreSwitches = sw[:maxSwitchRows], len(sw)-maxSwitchRows
			}
		}
	}
	if len(bars.Groups) == 0 {
		return r, nil
	}
	var err error
	if r.Completion, err = drawn("live-vs-predicted", func(b *bytes.Buffer) error { return plot.BarChart(b, "png", bars) }); err != nil {
		return nil, err
	}
	if len(starts) > 0 {
		scale, unit := startUnit(starts)
		r.StartUnit = unit
		for i := range starts {
			for j := range starts[i].Values {
				starts[i].Values[j] *= scale
			}
		}
		title := "per-circuit start difference, live − predicted transmit start"
		if r.Starts, err = drawn("start-differences", func(b *bytes.Buffer) error {
			return plot.DistributionAround(b, "png", title, "live − predicted start ("+unit+")", 0, starts)
		}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// runName labels a run by its algorithm, and its matrix too when the replay covers several.
func runName(run *ReplayRun, all []ReplayRun) string {
	for _, o := range all {
		if o.Matrix.Index != run.Matrix.Index {
			return "m" + strconv.Itoa(run.Matrix.Index) + " " + run.Algorithm
		}
	}
	return run.Algorithm
}

// compareRecords returns each circuit's live minus predicted transmit start (seconds, in circuit
// order, as hil.Compare pairs them) and the live switch log.
func compareRecords(live, predicted string) ([]float64, []SwitchRow, error) {
	lr, err := emulator.LoadRunRecord(live)
	if err != nil {
		return nil, nil, err
	}
	pr, err := emulator.LoadRunRecord(predicted)
	if err != nil {
		return nil, nil, err
	}
	if lr.Timeline == nil || pr.Timeline == nil {
		return nil, nil, fmt.Errorf("%s or %s: no timeline", live, predicted)
	}
	pred := map[int]float64{}
	for _, c := range pr.Timeline.Circuits {
		pred[c.Circuit] = c.TransmitStart
	}
	var ds []float64
	for _, c := range lr.Timeline.Circuits {
		if p, ok := pred[c.Circuit]; ok {
			ds = append(ds, c.TransmitStart-p)
		}
	}
	var sw []SwitchRow
	for _, ch := range lr.Timeline.SwitchChanges {
		sw = append(sw, SwitchRow{Switch: fmt.Sprintf("%d:%d", ch.Stage, ch.Switch), From: ch.From.String(), To: ch.To.String(), Start: ch.Start, End: ch.End})
	}
	slices.SortStableFunc(sw, func(a, b SwitchRow) int { return cmpFloat(a.Start, b.Start) })
	return ds, sw, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// startUnit picks ns, µs or ms so that the largest |difference| reads between 1 and 1000.
func startUnit(ss []plot.Series) (float64, string) {
	m := 0.0
	for _, s := range ss {
		for _, v := range s.Values {
			m = max(m, math.Abs(v))
		}
	}
	switch {
	case m < 1e-6:
		return 1e9, "ns"
	case m < 1e-3:
		return 1e6, "µs"
	}
	return 1e3, "ms"
}

// drawn is a figure drawn in memory as a PNG data URI.
func drawn(name string, draw func(*bytes.Buffer) error) (figure, error) {
	var b bytes.Buffer
	if err := draw(&b); err != nil {
		return figure{}, fmt.Errorf("%s: %w", name, err)
	}
	return figure{Name: name + " (drawn by the report)", URI: dataURI("image/png", b.Bytes())}, nil
}

// Reproduce is a reproduce directory's record (reproduce.json): the paper-vs-ours tables per figure.
type Reproduce struct {
	Path    string
	Tool    string             `json:"tool"`
	Inputs  []provenance.Input `json:"inputs"`
	Figures []reproduce.Figure `json:"figures"`
}

func readReproduce(path, rel string) (*Reproduce, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Reproduce
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.Path = rel
	return &r, nil
}
