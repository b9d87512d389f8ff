package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
)

// wearFlags are emulate's switch-wear report (Tetris §5): per-switch state changes over the
// pass, the most-changed switch, and its lifetime at a rate of passes for a rated cycle count.
type wearFlags struct {
	show           bool
	cycles, perSec float64
}

func (w *wearFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&w.show, "wear", false, "print each algorithm's switch state changes over the pass as a heatmap (stage × switch index), the most-changed switch and its lifetime")
	fs.Float64Var(&w.cycles, "switch-cycles", 1e9, "with --wear: state changes a switch is rated for (MEMS switches wear with every change)")
	fs.Float64Var(&w.perSec, "passes-per-second", 1000, "with --wear: how many times a second the pass (every selected matrix) runs, for the lifetime estimate")
}

func (w *wearFlags) check() error {
	if !(w.cycles > 0) || math.IsInf(w.cycles, 0) {
		return usagef("--switch-cycles %g: want a positive, finite number of state changes", w.cycles)
	}
	if !(w.perSec > 0) || math.IsInf(w.perSec, 0) {
		return usagef("--passes-per-second %g: want a positive, finite rate", w.perSec)
	}
	return nil
}

// write prints the wear report when --wear asked for it.
func (w *wearFlags) write(out io.Writer, o *experiment.Outcome) error {
	if !w.show || len(o.Records) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	return experiment.WriteWear(out, o.Wear(), w.cycles, w.perSec)
}
