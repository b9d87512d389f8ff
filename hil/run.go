package hil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/internal/outdir"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Format versions of the run directory's files.
const (
	ManifestVersion = 1
	SummaryVersion  = 1
	PartialVersion  = 1
)

// Job is one schedule to replay: its demand (nil: no lower bounds) and which matrix it serves.
type Job struct {
	Schedule *schedules.Schedule
	Demand   *schedules.Demand
	Matrix   emulator.MatrixRef
}

// Restorer undoes a setting on every exit path: a GPU clock lock (*nvml.ClockLock).
type Restorer interface {
	Restore() error
}

// Config is a whole live session: the schedules, what drives them, how they are predicted, and
// where the run directory goes.
type Config struct {
	// Dir is the run directory (created if missing; its parent must exist).
	Dir  string
	Jobs []Job
	// Env drives the replays (transfers, switches or injected α_r).
	Env Env
	// Predict are the timing models the emulator predicts each schedule with, the same models
	// the live devices follow; the lower bounds follow them too.
	Predict emulator.Config
	// LiveTransfer and LiveReconfig name what the live run measured and how it reconfigured,
	// for the records.
	LiveTransfer, LiveReconfig string
	// Manifest is the caller's part of manifest.json (inputs, flags, inventory, calibration,
	// wiring, endpoints); Run fills in the status, the times and the runs.
	Manifest Manifest
	// Clocks, when set, is restored before Run returns, whatever happened.
	Clocks Restorer
	// Notes go into summary.json as they are (e.g. that the prediction had no calibration).
	Notes []string
}

// Manifest is manifest.json: everything needed to tell what a run directory holds and how it
// was made. Complete is false until every replay has finished and every file is written; an
// interrupted or failed session leaves it false with Status and Error saying why.
type Manifest struct {
	Version  int    `json:"version"`
	Tool     string `json:"tool"`
	Started  string `json:"started"`
	Finished string `json:"finished,omitempty"`
	Complete bool   `json:"complete"`
	// Status is running, complete, interrupted or failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Inputs are the files read, with their SHA-256.
	Inputs []provenance.Input `json:"inputs"`
	// Flags are the command-line flags with their values, defaults included (name → value).
	Flags map[string]string `json:"flags,omitempty"`
	// Engine is the transfer engine ("cuda", "fake") and its options.
	Engine        string `json:"engine"`
	EngineOptions string `json:"engine_options,omitempty"`
	// Endpoints map each fabric port to its GPU and worker; SharedGPU says several endpoints
	// share one GPU (--allow-shared-gpu), so their copies contend for it.
	Endpoints []Endpoint      `json:"endpoints"`
	SharedGPU bool            `json:"shared_gpu"`
	Inventory *nvml.Inventory `json:"inventory,omitempty"`
	// Calibration and Wiring identify those inputs, when given.
	Calibration *FileRef   `json:"calibration,omitempty"`
	Wiring      *WiringRef `json:"wiring,omitempty"`
	// Reconfiguration says how switch changes were carried out (injected α_r, or a controller).
	Reconfiguration string `json:"reconfiguration"`
	// PredictTransfer and PredictReconfig name the emulator's models for the prediction.
	PredictTransfer string `json:"predict_transfer_model"`
	PredictReconfig string `json:"predict_reconfig_model"`
	// Clocks says whether GPU clocks were locked and restored.
	Clocks string `json:"clocks,omitempty"`
	// Runs lists each replay with its files, in order.
	Runs []RunFiles `json:"runs"`
}

// Endpoint is one fabric port's GPU and worker.
type Endpoint struct {
	Endpoint int    `json:"endpoint"`
	GPU      int    `json:"gpu"`
	BusID    string `json:"bus_id,omitempty"`
	CPUs     string `json:"cpus,omitempty"`
}

// FileRef names an input file with a description.
type FileRef struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Summary string `json:"summary,omitempty"`
}

// WiringRef is the wiring map a controller was opened with.
type WiringRef struct {
	Path      string  `json:"path"`
	SHA256    string  `json:"sha256"`
	Backend   string  `json:"backend"`
	Ports     int     `json:"ports"`
	TRSeconds float64 `json:"t_r_seconds"`
	TWSeconds float64 `json:"t_w_seconds"`
}

// WiringRefOf describes w, opened with backend.
func WiringRefOf(w *switchctl.Wiring, backend string) *WiringRef {
	return &WiringRef{Path: w.Path, SHA256: w.SHA256, Backend: backend, Ports: w.Ports, TRSeconds: w.TR.Seconds(), TWSeconds: w.TW.Seconds()}
}

// RunFiles is one replay's entry in the manifest. Paths are relative to the run directory.
type RunFiles struct {
	Algorithm string             `json:"algorithm"`
	Matrix    emulator.MatrixRef `json:"matrix"`
	// Status is pending, complete, interrupted or failed.
	Status    string `json:"status"`
	Schedule  string `json:"schedule"`
	Predicted string `json:"predicted"`
	Live      string `json:"live,omitempty"`
	Trace     string `json:"trace,omitempty"`
	Partial   string `json:"partial,omitempty"`
	// Reconfiguration, when set, says how this run reconfigured where it differs from the
	// session's (a crossbar schedule in a session with a switch controller).
	Reconfiguration string `json:"reconfiguration,omitempty"`
}

// Summary is summary.json: per replay, the live completion beside the prediction and how far
// the circuits' starts and ends lay from the predicted ones.
type Summary struct {
	Version  int          `json:"version"`
	Complete bool         `json:"complete"`
	Notes    []string     `json:"notes,omitempty"`
	Runs     []RunSummary `json:"runs"`
}

// RunSummary compares one replay with its prediction.
type RunSummary struct {
	Algorithm                  string             `json:"algorithm"`
	Matrix                     emulator.MatrixRef `json:"matrix"`
	Circuits                   int                `json:"circuits"`
	Commands                   int                `json:"commands"`
	CompletionSeconds          float64            `json:"completion_seconds"`
	PredictedCompletionSeconds float64            `json:"predicted_completion_seconds"`
	// LiveOverPredicted is CompletionSeconds / PredictedCompletionSeconds.
	LiveOverPredicted float64 `json:"live_over_predicted"`
	// StartDifference and EndDifference are over circuits, live minus predicted transmit
	// start (end).
	StartDifference Diff `json:"start_difference_seconds"`
	EndDifference   Diff `json:"end_difference_seconds"`
	// SharedGPU repeats the manifest's: endpoints shared a GPU.
	SharedGPU bool `json:"shared_gpu"`
	// WallSeconds is how long the replay took on the clock.
	WallSeconds float64 `json:"wall_seconds"`
	// Execution is how the replay ran: "compiled" (device programs, the host only watching) or
	// "host-driven" (the host walks the order and starts every copy: real switch boards).
	Execution string `json:"execution"`
	// HarnessCost is over circuits, how long after its waits ended each one started: from its
	// last dependency's end stamp plus the modelled delay to its start stamp. It is the part of
	// a live figure that is the harness's, not the schedule's.
	HarnessCost Diff `json:"harness_cost_seconds"`
	// SpinStalls, beside HarnessCost, tell preemption from the harness's logic: the gaps above a
	// threshold between consecutive clock reads of the executor's spin loop across iterations
	// that did nothing but look (count, total, worst; program.Stalls). A harness cost near the
	// worst stall is the host not running the loop (steal time on a VM), not the loop's work.
	// Present where the executor records them: the in-process fake device in real time.
	SpinStalls *program.Stalls `json:"spin_stalls,omitempty"`
	// ClockOffsets are, for a compiled replay across worker processes, each device clock's
	// offset from CLOCK_MONOTONIC and its uncertainty, measured at the start and applied to the
	// device's stamps so that the timeline is on one clock.
	ClockOffsets []shared.Offset `json:"clock_offsets,omitempty"`
}

// Diff summarises per-circuit differences d (live − predicted, seconds): the median and the
// 99th percentile of |d|, and the d of largest magnitude, with its sign.
type Diff struct {
	Median float64 `json:"median"`
	P99    float64 `json:"p99"`
	Worst  float64 `json:"worst"`
}

// DiffOf summarises ds.
func DiffOf(ds []float64) Diff {
	if len(ds) == 0 {
		return Diff{}
	}
	abs := make([]float64, len(ds))
	var worst float64
	for i, d := range ds {
		abs[i] = math.Abs(d)
		if abs[i] > math.Abs(worst) {
			worst = d
		}
	}
	sort.Float64s(abs)
	return Diff{Median: abs[len(abs)/2], P99: abs[min(len(abs)*99/100, len(abs)-1)], Worst: worst}
}

// Compare summarises a live timeline against the predicted one of the same schedule.
func Compare(live, predicted *schedules.Timeline) (start, end Diff) {
	pred := make(map[int]schedules.CircuitTiming, len(predicted.Circuits))
	for _, c := range predicted.Circuits {
		pred[c.Circuit] = c
	}
	var ds, de []float64
	for _, c := range live.Circuits {
		p, ok := pred[c.Circuit]
		if !ok {
			continue
		}
		ds = append(ds, c.TransmitStart-p.TransmitStart)
		de = append(de, c.End-p.End)
	}
	return DiffOf(ds), DiffOf(de)
}

// Partial is an interrupted replay's measurements: NAME.partial.json.
type Partial struct {
	Version   int                `json:"version"`
	Algorithm string             `json:"algorithm"`
	Matrix    emulator.MatrixRef `json:"matrix"`
	Status    string             `json:"status"`
	Error     string             `json:"error"`
	Of        int                `json:"of_circuits"`
	Live      *Live              `json:"measured"`
}

// CheckDir checks that dir can be the run directory: a new directory (its parents are created), or an
// existing one that holds no run yet (no manifest.json), so that the files of two sessions never
// mix under one manifest.
func CheckDir(dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
			return fmt.Errorf("%s already holds a run (manifest.json); give a new directory", dir)
		}
		return nil
	}
	return outdir.Check(dir) // created, with its parents, by Run
}

// Run replays every job in order and writes the run directory: manifest.json first (incomplete)
// and again at the end, per job NAME.schedule.json, NAME.predicted.json (the emulator's run
// record), NAME.live.json (the measured run record, which verify --timeline accepts) and
// NAME.live.trace.json (Perfetto), and summary.json after every job. When ctx ends or a replay
// fails, what was measured is kept (NAME.partial.json), the manifest says incomplete and why,
// the switches are put safe (Replay does) and the clocks restored; the error is returned.
func Run(ctx context.Context, cfg Config) (sum *Summary, err error) {
	// Before there is a directory to record anything in, a failure still restores the clocks.
	early := func(err error) (*Summary, error) {
		if cfg.Clocks != nil {
			if rerr := cfg.Clocks.Restore(); rerr != nil {
				err = errors.Join(err, fmt.Errorf("hil: restoring GPU clocks: %w", rerr))
			}
		}
		return nil, err
	}
	if err := CheckDir(cfg.Dir); err != nil {
		return early(fmt.Errorf("hil: run directory: %w", err))
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return early(fmt.Errorf("hil: run directory: %w", err))
	}
	if cfg.Predict.Transfer == nil || cfg.Predict.Reconfig == nil {
		return early(errors.New("hil: the prediction needs a transfer and a reconfiguration model"))
	}
	m := cfg.Manifest
	m.Version, m.Status, m.Complete = ManifestVersion, "running", false
	if m.Tool == "" {
		m.Tool = provenance.Tool()
	}
	m.Started = time.Now().UTC().Format(time.RFC3339Nano)
	m.PredictTransfer, m.PredictReconfig = cfg.Predict.Transfer.Name(), cfg.Predict.Reconfig.Name()
	if m.Inputs == nil {
		m.Inputs = []provenance.Input{}
	}
	m.Runs = make([]RunFiles, len(cfg.Jobs))
	names := map[string]int{}
	for i, j := range cfg.Jobs {
		name := runName(j)
		if names[name]++; names[name] > 1 {
			name += "-" + strconv.Itoa(names[name])
		}
		m.Runs[i] = RunFiles{Algorithm: j.Schedule.Algorithm, Matrix: j.Matrix, Status: "pending",
			Schedule: name + ".schedule.json", Predicted: name + ".predicted.json"}
	}
	sum = &Summary{Version: SummaryVersion, Runs: []RunSummary{}, Notes: append([]string(nil), cfg.Notes...)}
	if m.SharedGPU {
		sum.Notes = append(sum.Notes, "several endpoints share a GPU (--allow-shared-gpu): their copies contend for its copy engines and memory, which the prediction does not model")
	}
	path := func(name string) string { return filepath.Join(cfg.Dir, name) }
	writeManifest := func() error {
		if err := safefile.WriteJSON(path("manifest.json"), &m); err != nil {
			return fmt.Errorf("hil: manifest: %w", err)
		}
		return nil
	}
	writeSummary := func() error {
		if err := safefile.WriteJSON(path("summary.json"), sum); err != nil {
			return fmt.Errorf("hil: summary: %w", err)
		}
		return nil
	}
	defer func() {
		// Every exit path: clocks back, the change log, the final manifest.
		if cfg.Clocks != nil {
			if rerr := cfg.Clocks.Restore(); rerr != nil {
				err = errors.Join(err, fmt.Errorf("hil: restoring GPU clocks: %w", rerr))
				m.Clocks = "locked; restoring failed: " + rerr.Error()
			} else {
				m.Clocks = "locked for the run, restored"
			}
		}
		if cfg.Env.SwitchLog != nil {
			if lerr := cfg.Env.SwitchLog.WriteFile(path("switch-log.jsonl")); lerr != nil {
				err = errors.Join(err, lerr)
			}
		}
		m.Finished = time.Now().UTC().Format(time.RFC3339Nano)
		switch {
		case err == nil:
			m.Complete, m.Status = true, "complete"
		case ctx.Err() != nil:
			m.Status, m.Error = "interrupted", err.Error()
		default:
			m.Status, m.Error = "failed", err.Error()
		}
		sum.Complete = m.Complete
		err = errors.Join(err, writeSummary(), writeManifest())
	}()
	if err := writeManifest(); err != nil {
		return sum, err
	}
	tool := m.Tool
	for i, j := range cfg.Jobs {
		rf := &m.Runs[i]
		s := j.Schedule
		if err := safefile.WriteJSON(path(rf.Schedule), s); err != nil {
			return sum, fmt.Errorf("hil: %w", err)
		}
		env, predict := cfg.Env, cfg.Predict
		if env.Switches != nil && s.Fabric != schedules.Benes {
			// A crossbar has no switches to command: its transmitters' re-pointings are
			// injected as α_r (the controller's nominal T_r + T_w unless one is set), all in
			// parallel, and predicted so.
			if env.AlphaR <= 0 {
				env.AlphaR = time.Duration(predict.Reconfig.Nominal() * 1e9)
			}
			env.Switches, env.SwitchLog = nil, nil
			predict.Reconfig = emulator.ParallelReconfig(env.AlphaR.Seconds())
			rf.Reconfiguration = "injected α_r = " + env.AlphaR.String() + " per re-pointing (a crossbar has no switches to command)"
		}
		pres, ptl, err := emulator.Run(ctx, s, j.Demand, predict)
		if err != nil {
			rf.Status = "failed"
			return sum, fmt.Errorf("hil: predicting %s: %w", s.Algorithm, err)
		}
		pred := &emulator.RunRecord{Version: emulator.RunRecordVersion, Source: emulator.SourceEmulator, Tool: tool,
			Inputs: m.Inputs, Algorithm: s.Algorithm, Matrix: j.Matrix, TransferModel: predict.Transfer.Name(),
			ReconfigModel: predict.Reconfig.Name(), Result: pres, Timeline: ptl}
		if err := pred.Write(path(rf.Predicted)); err != nil {
			return sum, fmt.Errorf("hil: %w", err)
		}
		live, err := replayOne(ctx, s, env, predict.Reconfig)
		if err != nil {
			base := strings.TrimSuffix(rf.Schedule, ".schedule.json")
			rf.Status, rf.Partial = "failed", base+".partial.json"
			if ctx.Err() != nil {
				rf.Status = "interrupted"
			}
			p := &Partial{Version: PartialVersion, Algorithm: s.Algorithm, Matrix: j.Matrix, Status: rf.Status,
				Error: err.Error(), Of: len(s.Circuits), Live: live}
			if live == nil {
				p.Live = &Live{Circuits: []CircuitRecord{}, Commands: []CommandRecord{}}
			}
			if werr := safefile.WriteJSON(path(rf.Partial), p); werr != nil {
				err = errors.Join(err, werr)
			}
			return sum, fmt.Errorf("hil: replaying %s: %w", s.Algorithm, err)
		}
		liveReconfig := cfg.LiveReconfig
		if rf.Reconfiguration != "" {
			liveReconfig = rf.Reconfiguration
		}
		exec := emulator.Config{Transfer: named{predict.Transfer, cfg.LiveTransfer},
			Reconfig: namedReconfig{predict.Reconfig, liveReconfig}}
		res := emulator.Summarize(s, j.Demand, live.Timeline, exec, live.Counts)
		rec := &emulator.RunRecord{Version: emulator.RunRecordVersion, Source: emulator.SourceLive, Tool: tool,
			Inputs: m.Inputs, Algorithm: s.Algorithm, Matrix: j.Matrix, TransferModel: cfg.LiveTransfer,
			ReconfigModel: liveReconfig, Result: res, Timeline: live.Timeline}
		base := strings.TrimSuffix(rf.Schedule, ".schedule.json")
		rf.Live, rf.Trace = base+".live.json", base+".live.trace.json"
		if err := rec.Write(path(rf.Live)); err != nil {
			return sum, fmt.Errorf("hil: %w", err)
		}
		var b bytes.Buffer
		if err := emulator.WriteChromeTrace(&b, s, live.Timeline); err != nil {
			return sum, fmt.Errorf("hil: %w", err)
		}
		if err := safefile.WriteFile(path(rf.Trace), b.Bytes()); err != nil {
			return sum, fmt.Errorf("hil: %w", err)
		}
		rf.Status = "complete"
		rs := RunSummary{Algorithm: s.Algorithm, Matrix: j.Matrix, Circuits: len(s.Circuits), Commands: len(live.Commands),
			CompletionSeconds: res.Completion, PredictedCompletionSeconds: pres.Completion, SharedGPU: m.SharedGPU,
			WallSeconds: live.Wall.Seconds(), Execution: live.Execution, HarnessCost: HarnessCostOf(live.HarnessCost),
			ClockOffsets: live.Clocks, SpinStalls: live.Stalls}
		if pres.Completion > 0 {
			rs.LiveOverPredicted = res.Completion / pres.Completion
		}
		rs.StartDifference, rs.EndDifference = Compare(live.Timeline, ptl)
		sum.Runs = append(sum.Runs, rs)
		if err := writeSummary(); err != nil {
			return sum, err
		}
		if err := writeManifest(); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// replayOne replays s compiled on env.Device when there is one and no switch controller (or the
// device's station thread can send the switch commands: ApplyingDevice), and host-driven
// otherwise, its reconfigurations timed by reconfig in a compiled replay.
func replayOne(ctx context.Context, s *schedules.Schedule, env Env, reconfig emulator.ReconfigModel) (*Live, error) {
	var live *Live
	var err error
	if ad, ok := env.Device.(ApplyingDevice); ok && env.Switches != nil {
		live, err = ReplayCompiledSwitches(ctx, s, ad, reconfig, env.Switches)
	} else if env.Device == nil || env.Switches != nil {
		return Replay(ctx, s, env)
	} else {
		live, err = ReplayCompiled(ctx, s, env.Device, reconfig)
	}
	if err == nil && env.Progress != nil {
		for i := range s.Circuits {
			env.Progress(i+1, len(s.Circuits))
		}
	}
	return live, err
}

// runName is a file-name-safe name for one job: m<index>-<algorithm>, or schedule-<algorithm>
// for a schedule replayed without its matrix.
func runName(j Job) string {
	m := "schedule"
	if j.Matrix.Index >= 0 {
		m = "m" + strconv.Itoa(j.Matrix.Index)
	}
	alg := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, j.Schedule.Algorithm)
	return m + "-" + alg
}
