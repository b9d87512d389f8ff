package main

import (
	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
)

// switchBenchFlag is emulate's --switch-bench: the controller model's T_r and T_w from a bench
// file written by switch bench. It lives here so that emulate.go only registers and calls it.
type switchBenchFlag struct {
	path string
	fs   *pflag.FlagSet
}

func registerSwitchBench(fs *pflag.FlagSet) *switchBenchFlag {
	f := &switchBenchFlag{fs: fs}
	fs.StringVar(&f.path, "switch-bench", "", "with --reconfig-model controller: take T_r, T_w and B from this bench file (written by switch bench) instead of --tr, --tw and --batch")
	return f
}

// times returns the controller model's T_r and T_w in seconds and its batch size B: the bench
// file's when one is given, else tr, tw and batch (from --tr, --tw and --batch). Giving both is an
// error naming the flags. A bench file from before B was measured gives B = 0, the one request
// per command the emulator then charged.
func (f *switchBenchFlag) times(tr, tw float64, batch int) (float64, float64, int, error) {
	if f == nil || f.path == "" {
		return tr, tw, batch, nil
	}
	for _, name := range []string{"tr", "tw", "batch"} {
		if f.fs.Changed(name) {
			return 0, 0, 0, usagef("--switch-bench %q and --%s: the bench file gives T_r, T_w and B; drop one", f.path, name)
		}
	}
	b, err := benchfile.Read(f.path)
	if err != nil {
		return 0, 0, 0, usagef("--switch-bench %q: %v", f.path, err)
	}
	return b.TRSeconds, b.TWSeconds, b.Batch, nil
}

// parallel refuses --switch-bench with the parallel model, which has no T_r or T_w.
func (f *switchBenchFlag) parallel() error {
	if f != nil && f.path != "" {
		return usagef("--switch-bench %q: needs --reconfig-model controller", f.path)
	}
	return nil
}
