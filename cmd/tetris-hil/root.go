package main

import (
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
)

// logger is configured by the root command's persistent flags before any subcommand runs.
var logger = zerolog.Nop()

func newRootCmd() *cobra.Command {
	var logLevel, logFormat string
	var maxInput maxInputFlag
	root := &cobra.Command{
		Use:   "tetris-hil",
		Short: "Circuit scheduling on reconfigurable photonic interconnects, in the loop with real GPUs",
		Long: `tetris-hil schedules GPU-to-GPU demand (bytes from GPU i to GPU j, e.g. one MoE
All-to-All) onto a Beneš network of 2×2 photonic switches with the Tetris scheduler and its
baselines, checks every schedule with an independent verifier, and executes it in virtual time
at the granularity of single switches.

Units: bandwidth flags take a unit (800Gbps, 100GB/s); delays take one too (10us, 1ms).
Every command that touches hardware also runs with --fake (no GPU, no NVML, no switch).`,
		Version:       strings.TrimPrefix(provenance.Tool(), "tetris-hil "),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			l, err := newLogger(os.Stderr, logLevel, logFormat)
			if err != nil {
				return err
			}
			logger = l
			readlimit.Reset()
			for _, spec := range maxInput {
				if err := readlimit.Set(spec); err != nil {
					return usagef("--max-input %v", err)
				}
			}
			return nil
		},
	}
	// warn by default: a one-shot command's result and its progress bar say enough, and a script
	// that keeps standard error gets only what went wrong. --log-level info shows the chatter.
	root.PersistentFlags().StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "console", "log format: console (plain text, coloured on a terminal) or json (one object a line)")
	// --version prints what the version command prints (the text holds no template actions).
	var version strings.Builder
	_ = writeVersion(&version)
	root.SetVersionTemplate(version.String())
	root.PersistentFlags().Var(&maxInput, "max-input",
		"raise (or lower) the size limit of one kind of input file, e.g. demand=4GiB (repeatable; kinds and limits: README, Limits)")
	root.SetFlagErrorFunc(flagError)
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	tidyUsage(root)
	registerCompletions(root)
	return root
}

// subcommands is filled by each command's file (in init), so adding a command touches one file.
var subcommands []func() *cobra.Command

func newLogger(w io.Writer, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Nop(), usagef("--log-level %q: want debug, info, warn or error", level)
	}
	switch format {
	case "auto": // what scripts wrote when auto meant JSON off a terminal: console now, as the default
		format = "console"
	case "console", "json":
	default:
		return zerolog.Nop(), usagef("--log-format %q: want console or json", format)
	}
	var out io.Writer = w
	if format == "console" {
		// Colour codes only where a terminal shows them: --log-format console into a file or a
		// pipe gets plain text.
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !isTerminal(w)}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}

// exactArgs is cobra.ExactArgs with a usage error (exit 2).
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d (see --help)", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// maxInputFlag collects --max-input KIND=SIZE, repeatable; readlimit checks each when applied.
type maxInputFlag []string

func (f *maxInputFlag) String() string     { return strings.Join(*f, ",") }
func (f *maxInputFlag) Type() string       { return "KIND=SIZE" }
func (f *maxInputFlag) Set(s string) error { *f = append(*f, s); return nil }
