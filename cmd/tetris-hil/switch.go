package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"

	// The backends register themselves by name.
	_ "github.com/tetris-hil/tetris-hil/switchctl/crystal"
	_ "github.com/tetris-hil/tetris-hil/switchctl/fake"
	_ "github.com/tetris-hil/tetris-hil/switchctl/gpioswitch"
	_ "github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

func init() { subcommands = append(subcommands, newSwitchCmd) }

func newSwitchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "switch emulate|set|get|safe|bench --wiring FILE",
		Short: "Drive the 2×2 switch hardware of a wiring map, or emulate a switch board",
		Long: `switch drives the photonic switches named in a wiring map (YAML: fabric size, backend, transport,
and the channel or pins of every switch of the Beneš fabric; see examples/wiring-8x8-*.yaml).

Backends: serial (a board driving many 2×2 elements over one serial line, with the protocol in
the README), osw22 (one single-switch product per port), gpio (one pin per element), crystal
(electroholographic crystals, two per element, break-before-make; over GPIO or a serial driver
board), fake (in memory). --fake uses the in-memory fake with the map's t_r and t_w instead of
the map's backend.

Switches are named stage:index (stage 0 at the inputs), states bar or cross. Every command puts
the hardware safe when interrupted (SIGINT).`,
		Example: `  tetris-hil switch emulate --wiring examples/wiring-8x8-serial.yaml --command-latency 2ms --settle 5ms
  tetris-hil switch set 0:3=cross 2:1=bar --wiring examples/wiring-8x8-serial.yaml --port /dev/pts/5
  tetris-hil switch get --wiring examples/wiring-8x8-serial.yaml --port /dev/pts/5
  tetris-hil switch bench --wiring examples/wiring-8x8-serial.yaml --port /dev/pts/5 -o bench.json
  tetris-hil switch safe --wiring examples/wiring-8x8-gpio.yaml`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSwitchEmulateCmd(), newSwitchSetCmd(), newSwitchGetCmd(), newSwitchSafeCmd(), newSwitchBenchCmd())
	return cmd
}

// hwFlags are the flags every command that opens the hardware takes.
type hwFlags struct {
	wiring, port, changeLog string
	fake                    bool
}

func (h *hwFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&h.wiring, "wiring", "", "wiring map (YAML; required)")
	fs.StringVar(&h.port, "port", "", "serial port, overriding the wiring map's serial.port (e.g. the path switch emulate prints)")
	fs.BoolVar(&h.fake, "fake", false, "use the in-memory fake backend with the map's t_r and t_w instead of its backend")
	fs.StringVar(&h.changeLog, "change-log", "", "write every change made (commanded, acknowledged, settled) to this file as JSON lines")
}

func loadWiring(path string) (*switchctl.Wiring, error) {
	if path == "" {
		return nil, usagef("--wiring: required (a wiring map, e.g. examples/wiring-8x8-serial.yaml)")
	}
	w, err := switchctl.LoadWiring(path)
	if err != nil {
		return nil, usagef("--wiring %q: %v", path, err)
	}
	return w, nil
}

// open loads the wiring map and opens its controller; run calls do, then closes the controller
// (which puts the hardware safe, also when ctx was cancelled) and writes the change log.
func (h *hwFlags) run(ctx context.Context, do func(c switchctl.Controller, w *switchctl.Wiring, log *switchctl.ChangeLog) error) (err error) {
	// A closed standard output (| head) must not kill the process before the hardware is
	// safe: with SIGPIPE ignored the write fails instead, and Close still runs.
	signal.Ignore(syscall.SIGPIPE)
	w, err := loadWiring(h.wiring)
	if err != nil {
		return err
	}
	if h.changeLog != "" {
		if err := safefile.Check(h.changeLog); err != nil {
			return usagef("--change-log %q: %v", h.changeLog, err)
		}
	}
	backend := w.Backend
	if h.fake {
		backend = "fake"
	}
	log := &switchctl.ChangeLog{}
	c, err := switchctl.OpenBackend(ctx, backend, w, switchctl.Options{Log: log, Port: h.port, Trace: debugSerial})
	if err != nil {
		return fmt.Errorf("switch backend %s (wiring map %s): %w", backend, w.Path, err)
	}
	logger.Debug().Str("backend", backend).Str("wiring", w.Path).Int("switches", len(w.Switches)).Msg("switch controller open")
	defer func() {
		logger.Debug().Int("changes", log.Len()).Msg("putting the switches safe and closing")
		sctx, cancel := switchctl.SafeContext(ctx)
		defer cancel()
		if cerr := c.Close(sctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("putting the switches safe: %w", cerr))
		}
		if h.changeLog != "" {
			err = errors.Join(err, log.WriteFile(h.changeLog))
		}
	}()
	return do(c, w, log)
}

func newSwitchSetCmd() *cobra.Command {
	var h hwFlags
	var hold bool
	cmd := &cobra.Command{
		Use:   "set STAGE:INDEX=bar|cross... --wiring FILE [--hold]",
		Short: "Apply one batch of switch changes (and, with --hold, keep them until interrupted)",
		Long: `set applies the changes as one batch (one Apply: on a serial board one SW line per 16 channels, then
*OPC?) and returns once every change has settled. Closing the controller afterwards puts the
hardware in its safe state, so without --hold set is for checking the wiring.

--hold keeps the configuration after it has settled (to measure light through a path, say) until
Ctrl-C or SIGTERM, then puts the hardware safe as always; it exits 130 or 143 as any interrupted
command does.`,
		Example: `  tetris-hil switch set 0:3=cross 2:1=bar --wiring examples/wiring-8x8-serial.yaml --port /dev/ttyACM0
  tetris-hil switch set 0:3=cross --wiring examples/wiring-8x8-serial.yaml --hold   # Ctrl-C to go safe`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s: give at least one change, e.g. 0:3=cross", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var changes []switchctl.Change
			for _, a := range args {
				ch, err := switchctl.ParseChange(a)
				if err != nil {
					return usagef("%v", err)
				}
				changes = append(changes, ch)
			}
			return h.run(cmd.Context(), func(c switchctl.Controller, w *switchctl.Wiring, log *switchctl.ChangeLog) error {
				if err := w.Check(changes); err != nil {
					return usagef("%v", err)
				}
				if err := c.Apply(cmd.Context(), changes); err != nil {
					return err
				}
				for _, e := range log.Entries(0) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s=%s settled in %s\n", e.Switch, e.State, units.FormatSeconds(e.Settled.Sub(e.Commanded).Seconds()))
				}
				if hold {
					fmt.Fprintf(cmd.ErrOrStderr(), "tetris-hil: holding %d change(s); Ctrl-C puts the switches safe\n", len(changes))
					<-cmd.Context().Done() // the controller's Close (in run) then puts them safe
				}
				return nil
			})
		},
	}
	h.register(cmd.Flags())
	cmd.Flags().BoolVar(&hold, "hold", false, "keep the configuration until interrupted (Ctrl-C, SIGTERM), then put the switches safe")
	return cmd
}

func newSwitchGetCmd() *cobra.Command {
	var h hwFlags
	var jsonOut string
	cmd := &cobra.Command{
		Use:     "get --wiring FILE",
		Short:   "Print every switch's state as read back from the hardware",
		Example: `  tetris-hil switch get --wiring examples/wiring-8x8-serial.yaml --port /dev/ttyACM0 --json`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return h.run(cmd.Context(), func(c switchctl.Controller, w *switchctl.Wiring, _ *switchctl.ChangeLog) error {
				st, err := c.States(cmd.Context())
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if jsonOut != "" {
					type row struct {
						Switch switchctl.Addr  `json:"switch"`
						State  switchctl.State `json:"state"`
					}
					rows := make([]row, len(st))
					for i, s := range st {
						rows[i] = row{s.Switch, s.State}
					}
					return writeJSONTo(out, jsonOut, rows)
				}
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "switch\tdriven by\tstate")
				for i, s := range st {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Switch, drive(w.Backend, w, w.Switches[i]), s.State)
				}
				return tw.Flush()
			})
		},
	}
	h.register(cmd.Flags())
	jsonFlag(cmd.Flags(), &jsonOut, "every switch's state, instead of the table")
	return cmd
}

func drive(backend string, w *switchctl.Wiring, s switchctl.SwitchWiring) string {
	switch {
	case backend == "gpio":
		return "pin " + s.Pin
	case backend == "osw22":
		return "port " + s.Port
	case backend == "crystal" && w.Crystal.Transport == "gpio":
		return "pins " + s.PinA + "/" + s.PinB
	}
	return fmt.Sprintf("channel %d", s.Channel)
}

func newSwitchSafeCmd() *cobra.Command {
	var h hwFlags
	cmd := &cobra.Command{
		Use:   "safe --wiring FILE",
		Short: "Put the hardware in its safe state",
		Long: `safe puts the hardware in its safe state: a switch board every channel bar (SAFE), GPIO every pin
low, a crystal driver every crystal off and then high voltage off.`,
		Example: `  tetris-hil switch safe --wiring examples/wiring-8x8-gpio.yaml`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return h.run(cmd.Context(), func(c switchctl.Controller, _ *switchctl.Wiring, _ *switchctl.ChangeLog) error {
				if err := c.Halt(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "safe")
				return nil
			})
		},
	}
	h.register(cmd.Flags())
	return cmd
}

func newSwitchBenchCmd() *cobra.Command {
	var h hwFlags
	var rounds int
	var jsonOut string
	var out string
	cmd := &cobra.Command{
		Use:   "bench --wiring FILE [--rounds 200] [--json] [-o FILE]",
		Short: "Measure a controller's command round trip and settle latency, and derive T_r and T_w",
		Long: `bench measures the controller model of Er-El and Feitelson §2.3.3 (T_c = T_r + T_w), in which a
command of k changes costs ⌈k/B⌉·T_r + T_w. It toggles the switches one at a time (in wiring-map
order, --rounds times) and reports the command round trip (sent to acknowledged) and the settle
latency (sent to settled), median and p99, and the derived T_r (median round trip: the part of a
request that holds the controller) and T_w (median acknowledged-to-settled: the part that
overlaps other commands). Then it applies batches of k changes (k up to the map's switches, 64
at most; 5 tries each) and counts each batch's requests as its shortest busy time (first change
sent to last acknowledged) over a batch of one's: B, the most changes one request carries, is the largest
k that is still one request (found by bisection; "no limit" when every batch tried was one). The
bench file (--json to standard output, -o FILE) is what emulate --reconfig-model controller
--switch-bench FILE reads.

Interrupted (SIGINT), it stops and puts every switch safe.`,
		Example: `  tetris-hil switch bench --wiring examples/wiring-8x8-serial.yaml --port /dev/pts/5 --rounds 500 -o bench.json
  tetris-hil emulate --reconfig-model controller --switch-bench bench.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rounds < 1 {
				return usagef("--rounds %d: want at least 1", rounds)
			}
			if out != "" {
				if err := safefile.Check(out); err != nil {
					return usagef("-o %q: %v", out, err)
				}
			}
			return h.run(cmd.Context(), func(c switchctl.Controller, w *switchctl.Wiring, log *switchctl.ChangeLog) error {
				var bar *progressbar.ProgressBar
				if f, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
					bar = progressbar.NewOptions(rounds, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("bench"),
						progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
					defer bar.Finish()
				}
				bf, err := switchctl.Bench(cmd.Context(), c, log, w, switchctl.BenchOptions{Rounds: rounds, Progress: func(done, total int) {
					if bar != nil {
						if bar.GetMax() != total {
							bar.ChangeMax(total)
						}
						bar.Set(done)
					}
				}})
				if err != nil {
					return err
				}
				bf.Backend = map[bool]string{true: "fake", false: w.Backend}[h.fake]
				bf.Tool = provenance.Tool()
				b, err := bf.Marshal()
				if err != nil {
					return err
				}
				var wrote []string
				for _, p := range []string{out, jsonOut} {
					if p != "" && p != "-" {
						if err := safefile.WriteFile(p, b); err != nil {
							return err
						}
						wrote = append(wrote, p)
					}
				}
				if jsonOut == "-" {
					_, err := cmd.OutOrStdout().Write(b)
					if len(wrote) > 0 {
						fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", strings.Join(wrote, ", "))
					}
					return err
				}
				printBench(cmd.OutOrStdout(), bf, rounds)
				if len(wrote) > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", strings.Join(wrote, ", "))
				}
				return nil
			})
		},
	}
	h.register(cmd.Flags())
	cmd.Flags().IntVar(&rounds, "rounds", 200, "number of single-switch toggles")
	jsonFlag(cmd.Flags(), &jsonOut, "the bench file (JSON), instead of the table")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the bench file here")
	return cmd
}

func printBench(w io.Writer, f *benchfile.File, rounds int) {
	s := units.FormatSeconds
	fmt.Fprintf(w, "backend %s, %d switches, %d toggles\n", f.Backend, f.Switches, rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tmedian\tp99\tmin\tmax")
	for _, r := range []struct {
		name string
		st   benchfile.Stats
	}{{"round trip", f.RoundTrip}, {"settle", f.Settle}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.name, s(r.st.MedianSeconds), s(r.st.P99Seconds), s(r.st.MinSeconds), s(r.st.MaxSeconds))
	}
	tw.Flush()
	fmt.Fprintf(w, "T_r %s  T_w %s\n", s(f.TRSeconds), s(f.TWSeconds))
	if len(f.BatchBusy) == 0 {
		return
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "batch\tbusy (median)\tbusy (min)\trequests")
	for _, b := range f.BatchBusy {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\n", b.Changes, s(b.MedianSeconds), s(b.MinSeconds), b.Requests)
	}
	tw.Flush()
	if f.Batch == 0 {
		fmt.Fprintf(w, "B: no limit seen up to %d changes (a command is one request)\n", f.BatchBusy[len(f.BatchBusy)-1].Changes)
	} else {
		fmt.Fprintf(w, "B %d: a command of k changes costs ⌈k/%d⌉·T_r + T_w\n", f.Batch, f.Batch)
	}
}

func newSwitchEmulateCmd() *cobra.Command {
	var wiring, latency, settle, resetDelay, logPath string
	var garble, drop float64
	var reset, serialSettle bool
	var batch int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "emulate --wiring FILE [--command-latency 2ms] [--settle 5ms]",
		Short: "Run a switch board emulator on a pseudo-terminal",
		Long: `emulate runs an emulated switch board on a pseudo-terminal and prints its device path on the first
line of standard output; point --port (or the wiring map's serial.port) at it. The board speaks
the serial protocol of the README: a switch board for backend serial, a crystal driver board for
backend crystal with transport serial; for backend osw22 it runs one single-switch device per
switch and links each switch's port path to its pseudo-terminal.

The board's timing is the controller model of Er-El and Feitelson §2.3.3 (T_c = T_r + T_w): a set
line of k channels is ⌈k/B⌉ requests (--batch B, a divisor of 16; default a whole line), each
taking --command-latency (T_r) one at a time; its changes settle --settle (T_w) after its last
request (*OPC? answers then), overlapping the next lines unless --serial-settle. Queries answer
at once. --garble and --drop inject corrupted replies
and lost lines with those probabilities; --reset-on-open makes the board reset whenever the port
is opened (it ignores input for --reset-delay, prints boot noise, and starts with every channel
safe). --log writes one JSON line per command received, in order. It runs until interrupted.`,
		Example: `  tetris-hil switch emulate --wiring examples/wiring-8x8-serial.yaml --command-latency 2ms --settle 5ms --log board.jsonl
  tetris-hil switch emulate --wiring examples/wiring-8x8-serial.yaml --garble 0.05 --drop 0.05 --reset-on-open`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := loadWiring(wiring)
			if err != nil {
				return err
			}
			if batch < 0 || batch > 0 && 16%batch != 0 {
				return usagef("--batch %d: want a divisor of the 16 channels a line carries (1, 2, 4, 8, 16), or 0 for a whole line", batch)
			}
			cfg := boardemu.Config{Garble: garble, Drop: drop, ResetOnOpen: reset, Seed: seed, Batch: batch, SerialSettle: serialSettle}
			for _, d := range []struct {
				flag, v string
				to      *time.Duration
			}{{"--command-latency", latency, &cfg.Latency}, {"--settle", settle, &cfg.Settle}, {"--reset-delay", resetDelay, &cfg.ResetDelay}} {
				sec, err := units.ParseDuration(d.v)
				if err != nil {
					return usagef("%s %q: %v", d.flag, d.v, err)
				}
				*d.to = time.Duration(sec*1e9 + 0.5)
			}
			for _, p := range []struct {
				flag string
				v    float64
			}{{"--garble", garble}, {"--drop", drop}} {
				if !(p.v >= 0 && p.v < 1) {
					return usagef("%s %v: want a probability in [0, 1)", p.flag, p.v)
				}
			}
			switch {
			case w.Backend == "serial":
				cfg.Kind = boardemu.SwitchBoard
			case w.Backend == "crystal" && w.Crystal.Transport == "serial":
				cfg.Kind = boardemu.CrystalBoard
			case w.Backend == "osw22":
				cfg.Kind = boardemu.OSW22
			default:
				return usagef("--wiring %q: backend %s has no serial device to emulate (serial, osw22, or crystal with transport serial)", wiring, w.Backend)
			}
			var logOut io.Writer
			if logPath != "" {
				if err := safefile.Check(logPath); err != nil {
					return usagef("--log %q: %v", logPath, err)
				}
				// A live log, written as the commands come: not a result file written at the end.
				f, err := os.Create(logPath)
				if err != nil {
					return err
				}
				defer f.Close()
				logOut = f
			}
			return runBoardEmulator(cmd.Context(), cmd.OutOrStdout(), w, cfg, boardemu.NewLog(logOut))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&wiring, "wiring", "", "wiring map (YAML; required): the board's channels")
	fs.StringVar(&latency, "command-latency", "0", "time the board takes per request of a set line (T_r)")
	fs.StringVar(&settle, "settle", "0", "settle time of each change")
	fs.IntVar(&batch, "batch", 0, "channels the board handles per request of --command-latency (B); 0: a whole line")
	fs.BoolVar(&serialSettle, "serial-settle", false, "take the next set line only once the last has settled")
	fs.Float64Var(&garble, "garble", 0, "probability that a reply is corrupted")
	fs.Float64Var(&drop, "drop", 0, "probability that a received line is dropped")
	fs.BoolVar(&reset, "reset-on-open", false, "reset the board whenever the port is opened")
	fs.StringVar(&resetDelay, "reset-delay", "300ms", "with --reset-on-open: how long the reset takes")
	fs.Uint64Var(&seed, "seed", 1, "seed of the injected faults")
	fs.StringVar(&logPath, "log", "", "write one JSON line per command received to this file")
	return cmd
}

// runBoardEmulator serves the boards until ctx is done and prints their device paths first.
func runBoardEmulator(ctx context.Context, out io.Writer, w *switchctl.Wiring, cfg boardemu.Config, log *boardemu.Log) error {
	var ptys []*boardemu.PTY
	defer func() {
		for _, p := range ptys {
			p.Close()
		}
	}()
	if cfg.Kind != boardemu.OSW22 {
		for _, s := range w.Switches {
			cfg.Channels = append(cfg.Channels, s.Channel)
		}
		p, err := boardemu.StartPTY(ctx, boardemu.New(cfg, log))
		if err != nil {
			return err
		}
		ptys = append(ptys, p)
		fmt.Fprintln(out, p.Path)
	} else {
		var lines []string
		for k, s := range w.Switches {
			c := cfg
			c.Name, c.Seed = s.Switch.String(), cfg.Seed+uint64(k)
			p, err := boardemu.StartPTY(ctx, boardemu.New(c, log))
			if err != nil {
				return err
			}
			ptys = append(ptys, p)
			if err := relink(s.Port, p.Path); err != nil {
				return fmt.Errorf("switch %s (wiring map line %d): %w", s.Switch, s.Line, err)
			}
			defer os.Remove(s.Port)
			lines = append(lines, fmt.Sprintf("%s %s -> %s", p.Path, s.Port, s.Switch))
		}
		fmt.Fprintln(out, strings.Join(lines, "\n"))
	}
	if f, ok := out.(interface{ Sync() error }); ok {
		f.Sync() //nolint:errcheck // best effort: the reader waits for the first line
	}
	select {
	case <-ctx.Done():
	case <-ptys[0].Done():
	}
	return log.Err()
}

// relink points path at target, replacing a symbolic link but nothing else.
func relink(path, target string) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("port %s exists and is not a symbolic link: not replacing it", path)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	return os.Symlink(target, path)
}
