package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/emulator/sweep"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

// registerSweepShard adds sweep's --shard flag and its merge subcommand.
func registerSweepShard(cmd *cobra.Command, f *sweepFlags) {
	cmd.Flags().StringVar(&f.shard, "shard", "",
		"run only slice K of N of the grid (K from 0) and write "+sweep.ShardFileName+" to --out; join the slices with sweep merge")
	cmd.AddCommand(newSweepMergeCmd())
}

// runSweepShard runs one shard of the grid of cfg and writes its shard file.
func runSweepShard(cmd *cobra.Command, f *sweepFlags, cfg sweep.Config) error {
	sh, err := sweep.ParseShard(f.shard)
	if err != nil {
		return usagef("--shard %q: %v", f.shard, err)
	}
	demands, inputFiles, err := f.sweepDemands(cmd, &cfg)
	if err != nil {
		return err
	}
	inputs, err := describeInputs(append(inputFiles, [2]string{"calibration", f.models.calibration},
		[2]string{"measured", f.models.measured})...)
	if err != nil {
		return err
	}
	lock, err := claimOutDir(cmd, "out", f.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	cells := len(cfg.Bandwidths) * len(cfg.Reconfigs)
	units := cells * len(demands)
	lo, hi := sh.Index*units/sh.Count, (sh.Index+1)*units/sh.Count
	total := (hi - lo) * len(cfg.Names())
	logger.Info().Str("shard", sh.String()).Int("units", hi-lo).Int("of", units).Int("runs", total).
		Int("jobs", cfg.Jobs).Msg("sweep shard")
	var finish func()
	cfg.Progress, finish = newProgress(cmd.ErrOrStderr(), f.progress, "sweep "+sh.String(), total)
	start := time.Now()
	sf, err := sweep.RunShard(cmd.Context(), demands, cfg, sh, provenance.Tool(), inputs)
	finish()
	if err != nil {
		return memoryRefusal(err)
	}
	logger.Info().Dur("elapsed", time.Since(start)).Msg("sweep shard done")
	path := filepath.Join(f.out, sweep.ShardFileName)
	if err := safefile.WriteJSON(path, sf); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "shard %s: units %d..%d of %d (%d matrices × %d cells), %d runs; wrote %s\n",
		sh, lo, hi, units, len(demands), cells, total, path)
	return err
}

func newSweepMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge SHARD... --out DIR",
		Short: "Join the shards of a sweep (sweep --shard K/N) into the files one unsharded run writes",
		Long: `merge reads the shard file (` + sweep.ShardFileName + `) of every shard of one sweep, given as the shard
directories or the files themselves, in any order, and writes into --out exactly the files an
unsharded sweep writes: sweep.csv (byte-identical to one run's), the heatmaps, the
completion / lower-bound plot and sweep.json, whose "shards" list names every shard's file, its
SHA-256 and the inputs it read.

It refuses shards from different sweeps (inputs, selected matrices, grid, algorithms, models,
ablations or tool version differ), a shard given twice, and a missing shard.`,
		Example: `  for k in 0 1 2 3; do tetris-hil sweep --demand examples/trace.json --shard $k/4 --out shards/$k; done
  tetris-hil sweep merge shards/* --out sweep/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s: give the shard directories or files to merge (see --help)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runSweepMerge(cmd, args, out) },
	}
	cmd.Flags().StringVar(&out, "out", "", "directory for the merged CSV, plots and sweep.json (created if missing)")
	return cmd
}

func runSweepMerge(cmd *cobra.Command, args []string, out string) error {
	if out == "" {
		return usagef("--out: an output directory is required")
	}
	if err := checkOutDir(out); err != nil {
		return usagef("--out %q: %v", out, err)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		for _, name := range []string{"sweep.csv", "sweep.json"} {
			if err := safefile.Check(filepath.Join(out, name)); err != nil {
				return usagef("--out %q: %v", out, err)
			}
		}
	}
	var shards []*sweep.ShardFile
	for _, a := range args {
		sf, err := sweep.ReadShard(a)
		if err != nil {
			return shardUsage(err)
		}
		shards = append(shards, sf)
	}
	res, m, err := sweep.Merge(shards)
	if err != nil {
		return shardUsage(err)
	}
	lock, err := claimOutDir(cmd, "out", out)
	if err != nil {
		return err
	}
	defer lock.Release()
	files, err := res.WriteFiles(cmd.Context(), out, m)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if err := res.WriteSummary(w); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nmerged %d shards; wrote %s\n", len(shards), strings.Join(files, ", "))
	return err
}

// shardUsage makes a shard file that is not one, or shards that do not join, bad input (exit 2).
func shardUsage(err error) error {
	if errors.As(err, new(*sweep.ShardError)) {
		return &usageError{err}
	}
	return err
}
