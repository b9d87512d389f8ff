package experiment

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

// ReportVersion is the version of the Report file.
const ReportVersion = 1

// Report is the JSON file of an Outcome (emulate --json): what ran it (tool, inputs with their
// SHA-256), the planning bandwidth and α_r, the execution models, every run and, over several
// matrices, the totals.
type Report struct {
	Version       int                `json:"version"`
	Tool          string             `json:"tool"`
	Inputs        []provenance.Input `json:"inputs"`
	Bandwidth     float64            `json:"bandwidth_bytes_per_second"`
	Reconfig      float64            `json:"reconfig_seconds"`
	TransferModel string             `json:"transfer_model"`
	ReconfigModel string             `json:"reconfig_model"`
	Runs          []Record           `json:"runs"`
	Totals        []Total            `json:"totals,omitempty"`
}

// NewReport describes o, run under cfg by tool from inputs. Totals are included when the runs
// cover more than one matrix of a demand file.
func NewReport(o *Outcome, cfg Config, tool string, inputs []provenance.Input) *Report {
	r := &Report{Version: ReportVersion, Tool: tool, Inputs: inputs,
		Bandwidth: cfg.Options.Bandwidth, Reconfig: cfg.Options.Reconfig,
		TransferModel: cfg.Exec.Transfer.Name(), ReconfigModel: cfg.Exec.Reconfig.Name(), Runs: o.Records}
	if len(o.Records) > 0 && o.Records[0].Matrix.Index >= 0 && o.Matrices() > 1 {
		r.Totals = o.Totals
	}
	return r
}

// Write writes the report to path (safefile rules).
func (r *Report) Write(path string) error {
	if err := safefile.WriteJSON(path, r); err != nil {
		return fmt.Errorf("experiment report: %w", err)
	}
	return nil
}

// RunRecord is the run record of r (kept with Config.KeepRuns: nil timeline otherwise), executed
// in the emulator under exec by tool from inputs, with r's per-switch state changes.
func (r *Record) RunRecord(exec emulator.Config, tool string, inputs []provenance.Input) *emulator.RunRecord {
	return &emulator.RunRecord{Version: emulator.RunRecordVersion, Source: emulator.SourceEmulator,
		Tool: tool, Inputs: inputs, Algorithm: r.Algorithm, Matrix: r.Matrix,
		TransferModel: exec.Transfer.Name(), ReconfigModel: exec.Reconfig.Name(),
		Result: r.Result, StateChangesMax: r.StateChangesMax, StateChangesPerSwitch: r.StateChangesPerSwitch,
		Timeline: r.Timeline}
}
