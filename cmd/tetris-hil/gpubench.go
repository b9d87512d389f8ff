package main

import (
	"fmt"
	"os"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func init() { subcommands = append(subcommands, newGPUBenchCmd) }

func newGPUBenchCmd() *cobra.Command {
	var (
		ff                       fakeGPUFlags
		src, dst                 int
		copyKind                 string
		minSize, maxSize         string
		reps, warmup             int
		fakeAlpha, fakeBandwidth string
		fakeSeed                 uint64
		lockClocks               bool
		clockMHz                 uint
		timeout                  string
		jsonPath                 string
		unpinned                 bool
	)
	cmd := &cobra.Command{
		Use:   "gpu-bench",
		Short: "Time GPU-to-GPU copies between two pinned worker processes over a size sweep",
		Long: `gpu-bench starts one worker process on the source GPU and one on the destination GPU (the same
GPU is allowed: a loopback pair), each pinned from birth to its GPU's local CPUs. The receiver
exports a buffer by CUDA IPC handle, the sender opens it and copies into it, timing each copy with
CUDA events behind a spin kernel that releases the whole batch at once. Where IPC is unavailable
the sender copies to a buffer it allocates on the destination itself (peer copy). It prints the
median, minimum and maximum time and the bandwidth per size, with the source GPU's temperature,
SM clock and throttle reasons before and after.

With --fake, the workers run the fake engine: T(m) = α + m/B per pair (around --fake-alpha and
--fake-bandwidth) with seeded noise and occasional outliers, through the same worker processes.`,
		Example: `  tetris-hil gpu-bench --fake --src 0 --dst 4 --max 64MiB
  tetris-hil gpu-bench --src 0 --dst 1 --copy sm --lock-clocks --json bench.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			kind, err := transfer.ParseKind(copyKind)
			if err != nil {
				return usagef("--copy: %v", err)
			}
			lo, err := units.ParseBytes(minSize)
			if err != nil {
				return usagef("--min: %v", err)
			}
			hi, err := units.ParseBytes(maxSize)
			if err != nil {
				return usagef("--max: %v", err)
			}
			sizes, err := bench.Sizes(lo, hi)
			if err != nil {
				return usagef("--min %s --max %s: %v", minSize, maxSize, err)
			}
			if reps < 1 || warmup < 0 {
				return usagef("--reps %d --warmup %d: want reps >= 1, warmup >= 0", reps, warmup)
			}
			if err := checkReps(reps, warmup); err != nil {
				return err
			}
			if jsonPath != "" && jsonPath != "-" {
				if err := safefile.Check(jsonPath); err != nil {
					return usagef("--json %q: %v", jsonPath, err)
				}
			}
			callTimeout, err := units.ParseDuration(timeout)
			if err != nil || callTimeout <= 0 {
				return usagef("--timeout %q: want a positive duration such as 60s", timeout)
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary to start workers: %w", err)
			}
			cfg := bench.Config{
				Src: src, Dst: dst, Sizes: sizes, Reps: reps, Warmup: warmup, Kind: kind,
				Engine: "cuda", Command: []string{exe, "worker"}, Visible: cudaVisible(),
				Unpinned: unpinned, Timeout: secondsToDuration(callTimeout), Log: os.Stderr, Started: debugWorker,
			}
			if ff.fake {
				m := fake.Defaults
				if m.Alpha, err = units.ParseDuration(fakeAlpha); err != nil {
					return usagef("--fake-alpha: %v", err)
				}
				if m.Bandwidth, err = units.ParseBandwidth(fakeBandwidth); err != nil {
					return usagef("--fake-bandwidth: %v", err)
				}
				m.Seed = fakeSeed
				cfg.Engine, cfg.EngineOptions = "fake", m.String()
			}
			lib, err := ff.open()
			if err != nil {
				return err
			}
			defer lib.Close()
			for _, g := range []struct {
				flag string
				i    int
			}{{"--src", src}, {"--dst", dst}} {
				if g.i < 0 || g.i >= lib.Count() {
					return usagef("%s %d: this machine has GPUs 0..%d (see tetris-hil devices)", g.flag, g.i, lib.Count()-1)
				}
			}
			cfg.Lib = lib
			ctx := cmd.Context()
			if lockClocks {
				lock, err := lib.LockClocks(ctx, uniq(src, dst), uint32(clockMHz))
				if err != nil {
					return err
				}
				defer func() {
					if err := lock.Restore(); err != nil {
						logger.Error().Err(err).Msg("restoring GPU clocks")
					}
				}()
			}
			logger.Info().Int("src", src).Int("dst", dst).Str("copy", copyKind).Str("engine", cfg.Engine).
				Int("sizes", len(sizes)).Msg("starting workers")
			res, err := bench.Run(ctx, cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonPath == "-" { // standard output carries the JSON alone
				return writeJSONTo(out, jsonPath, res)
			}
			if err := bench.WriteTable(out, res); err != nil {
				return err
			}
			if ff.fake && !unpinned {
				fmt.Fprintf(out, "(fake NVML: each worker's CPUs are its GPU's fake NUMA-node set cut to the CPUs this machine lets it use: GPU %d on %s, GPU %d on %s)\n",
					src, res.SrcCPUs, dst, res.DstCPUs)
			}
			if jsonPath != "" {
				if err := safefile.WriteJSON(jsonPath, res); err != nil {
					return fmt.Errorf("--json %s: %w", jsonPath, err)
				}
				fmt.Fprintf(out, "wrote %s\n", jsonPath)
			}
			return nil
		},
	}
	ff.register(cmd)
	f := cmd.Flags()
	f.IntVar(&src, "src", 0, "source GPU (NVML index; default 0)")
	f.IntVar(&dst, "dst", 1, "destination GPU (NVML index; equal to --src for a loopback pair)")
	f.StringVar(&copyKind, "copy", "ce", "copy with the copy engines (ce) or an SM kernel (sm)")
	f.StringVar(&minSize, "min", "4KiB", "smallest copy; sizes double from here")
	f.StringVar(&maxSize, "max", "1GiB", "largest copy")
	f.IntVar(&reps, "reps", 20, "timed copies per size")
	f.IntVar(&warmup, "warmup", 3, "untimed copies per size before the timed ones")
	f.StringVar(&fakeAlpha, "fake-alpha", "3us", "with --fake: per-copy latency α around which pairs lie")
	f.StringVar(&fakeBandwidth, "fake-bandwidth", "370GB/s", "with --fake: bandwidth B around which pairs lie")
	f.Uint64Var(&fakeSeed, "seed", 1, "with --fake: seed of the noise")
	renamedFlag(f, "fake-seed", "seed")
	f.BoolVar(&lockClocks, "lock-clocks", false, "lock the GPUs' SM clocks (NVML, needs root) for the run; restored on every exit")
	f.UintVar(&clockMHz, "clock-mhz", 0, "with --lock-clocks: SM clock in MHz (0: each GPU's maximum)")
	f.StringVar(&timeout, "timeout", "60s", "a worker that does not answer a request within this is reported hung and killed")
	f.StringVar(&jsonPath, "json", "", "also write the result, with every copy's time, to this JSON file (- for standard output, instead of the table)")
	f.BoolVar(&unpinned, "unpinned", false, "do not pin the workers to their GPUs' CPUs")
	return cmd
}

// checkReps bounds --reps and --warmup by transfer.MaxReps, so that a typo cannot grow a worker
// by gigabytes of times or its reply past the worker protocol's limit.
func checkReps(reps, warmup int) error {
	if reps > transfer.MaxReps {
		return usagef("--reps %d: at most %d timed copies per size (the worker protocol's limit)", reps, transfer.MaxReps)
	}
	if warmup > transfer.MaxReps {
		return usagef("--warmup %d: at most %d untimed copies per size", warmup, transfer.MaxReps)
	}
	return nil
}

func uniq(a, b int) []int {
	if a == b {
		return []int{a}
	}
	return []int{a, b}
}

func secondsToDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
