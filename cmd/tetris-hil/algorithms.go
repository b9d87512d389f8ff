package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/schedules"
)

func init() { subcommands = append(subcommands, newAlgorithmsCmd) }

func newAlgorithmsCmd() *cobra.Command {
	var namesOnly bool
	cmd := &cobra.Command{
		Use:   "algorithms [--names]",
		Short: "List the schedulers --algo takes, with what each does",
		Long: `algorithms lists every scheduler built into this binary, by the name --algo takes (schedule,
emulate, sweep, replay), with a line on what it does. --names prints the names alone, one a
line, for scripts and shell completion.`,
		Example: `  tetris-hil algorithms
  tetris-hil algorithms --names | head -3`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if namesOnly {
				_, err := fmt.Fprintln(w, strings.Join(schedules.Names(), "\n"))
				return err
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ALGORITHM\tWHAT IT DOES")
			for _, n := range schedules.Names() {
				fmt.Fprintf(tw, "%s\t%s\n", n, schedules.Summary(n))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&namesOnly, "names", false, "print the names alone, one a line")
	return cmd
}
