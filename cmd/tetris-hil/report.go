package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/emulator/report"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

func init() { subcommands = append(subcommands, newReportCmd) }

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RUNDIR -o report.html",
		Short: "One self-contained HTML page of a demo, emulate, sweep or replay directory",
		Long: `report reads a run directory and writes one HTML page that needs nothing else to open: the
inputs with their SHA-256 hashes and the tool version, the calibration plot, the results table
(completion against both lower bounds, Tetris's speedup), the Gantt charts, the sweep's heatmaps
and completion/lower-bound plot, and, where the directory records them (commands.json, as the
demo writes it), the command that reproduces each figure. Images are embedded as data: URIs; the
page fetches nothing (no scripts, fonts or styles from the network).

It recognises an emulate --json file by its contents (any name), sweep.json manifests (in the
directory or one level down), a replay directory (summary.json beside manifest.json: live vs
predicted completion per run as bars, the per-circuit start differences as box plots, each run's
switch log), a reproduce directory (reproduce.json: the paper-vs-ours tables of every figure),
and PNG/SVG charts by name: calibration*, gantt*, speedup-*, completion-vs-lower-bound*; other
images go under "Other figures".`,
		Example: `  tetris-hil demo --out run1 && tetris-hil report run1 -o run1.html
  tetris-hil sweep --out sw --bandwidth 100Gbps,800Gbps --reconfig 1us,100us && tetris-hil report sw -o sw.html
  tetris-hil replay --fake --matrix 0 --algo tetris,bvn --out r1 && tetris-hil report r1 -o r1.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("-o: the output file is required (e.g. -o report.html)")
			}
			if err := safefile.Check(out); err != nil {
				return usagef("-o %q: %v", out, err)
			}
			var b bytes.Buffer
			if err := report.Write(&b, args[0]); err != nil {
				return usagef("report %s: %v", args[0], err)
			}
			if err := safefile.WriteFile(out, b.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d KiB, self-contained)\n", out, b.Len()>>10)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file to write")
	return cmd
}
