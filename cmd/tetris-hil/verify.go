package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func init() { subcommands = append(subcommands, newVerifyCmd) }

func newVerifyCmd() *cobra.Command {
	var src demandSource
	var timelinePath string
	var tenants tenantFlags
	cmd := &cobra.Command{
		Use:   "verify SCHEDULE.json --demand FILE [--matrix I] [--timeline TIMELINE.json] | --tenants PORTS=FILE,… [--allocation A]",
		Short: "Check a schedule (and optionally an executed timeline) against its demand",
		Long: `verify checks a schedule file from any producer against the demand it claims to serve:

  - every path is a physical path of the Beneš fabric from its src to its dst (wiring convention
    in the README), and crossbar circuits have no path;
  - the bytes per (src, dst) add up exactly to the demand: nothing lost, nothing invented;
  - in barrier mode, no round uses a transmitter, receiver or switch lane twice, or a switch in
    two states;
  - with --timeline (from 'emulate --timeline' or a live run): every circuit ran once, no
    endpoint or switch lane carried two circuits at once, and no switch changed state while a
    circuit through it was live;
  - with --tenants (several jobs on one fabric, Tetris §5): the demand is each tenant's file on
    its ports, every circuit joins two ports of one tenant, and under --allocation strict every
    switch a circuit turns is its tenant's own (its sub-Beneš) and no switch a tenant may set is
    used by another; under centre, every switch at the levels a tenant's block spans is its own.
    Each violation names the circuit, its tenant and the switch.

Exit status: 0 valid, 1 invalid (every violation is listed), 2 bad usage or unreadable input.`,
		Example: `  tetris-hil schedule --algo tetris --demand examples/demand.csv -o s.json
  tetris-hil verify s.json --demand examples/demand.csv
  tetris-hil schedule --tenants "0-3=examples/tenant-a.csv,4-7=examples/tenant-b.csv" --allocation strict --fabric-ports 16 -o st.json
  tetris-hil verify st.json --tenants "0-3=examples/tenant-a.csv,4-7=examples/tenant-b.csv" --allocation strict`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := schedules.LoadSchedule(args[0])
			if err != nil {
				return &usageError{err}
			}
			var vs []schedules.Violation
			if tenants.spec != "" {
				if vs, err = verifyTenants(cmd, &tenants, src, s, args[0]); err != nil {
					return err
				}
			} else {
				if cmd.Flags().Changed("allocation") {
					return usagef("--allocation: only with --tenants")
				}
				ds, err := src.load(cmd.Context())
				if err != nil {
					return err
				}
				if len(ds) != 1 {
					return usagef("%s holds %d matrices: pick the one this schedule serves with --matrix (see tetris-hil trace show)", demandName(src.path), len(ds))
				}
				vs = schedules.Verify(s, ds[0].Demand)
			}
			if timelinePath != "" {
				tl, err := readTimelineOf(timelinePath, s, args[0])
				if err != nil {
					return err
				}
				if err := timelineOf(timelinePath, args[0], s, tl); err != nil {
					return err
				}
				vs = append(vs, schedules.VerifyTimeline(s, tl)...)
			}
			out := cmd.OutOrStdout()
			if len(vs) == 0 {
				fmt.Fprintf(out, "%s: valid: %d circuits, %d groups, %s fabric n=%d, %s mode\n",
					args[0], len(s.Circuits), s.Groups(), s.Fabric, s.N, s.Mode)
				return nil
			}
			for _, v := range vs {
				fmt.Fprintf(out, "%s: %s\n", args[0], v)
			}
			return &exitError{code: 1, msg: fmt.Sprintf("%s: invalid: %d violation(s)", args[0], len(vs))}
		},
	}
	src.register(cmd.Flags())
	cmd.Flags().StringVar(&timelinePath, "timeline", "", "also check an executed timeline (JSON written by emulate --timeline)")
	tenants.registerSpec(cmd.Flags(), "the schedule's fabric holds them all (instead of --demand)")
	return cmd
}

// readTimeline reads the timeline of a run record (emulated or live) or a bare Timeline.
func readTimeline(path string) (*schedules.Timeline, error) {
	tl, err := emulator.LoadTimeline(path)
	if err != nil {
		return nil, usagef("--timeline %q: %v", path, err)
	}
	return tl, nil
}

// readTimelineOf is readTimeline for schedule s read from schedulePath: a run record of another
// schedule is a usage error saying whose run it is, not hundreds of violations.
func readTimelineOf(path string, s *schedules.Schedule, schedulePath string) (*schedules.Timeline, error) {
	tl, rec, err := emulator.LoadTimelineRecord(path)
	if err != nil {
		return nil, usagef("--timeline %q: %v", path, err)
	}
	if rec != nil {
		if err := rec.CheckSchedule(path, s, schedulePath); err != nil {
			return nil, usagef("--timeline %q: %v", path, err)
		}
	}
	return tl, nil
}
