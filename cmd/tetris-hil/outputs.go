package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/internal/outdir"
	"github.com/tetris-hil/tetris-hil/internal/outlock"
)

// checkOutDir reports whether dir is, or can be made, an output directory (created with its
// parents when the run writes; a path through a file is refused).
func checkOutDir(dir string) error { return outdir.Check(dir) }

// claimOutDir creates the output directory dir given by --flag (and its parents), says on
// standard error which it created, and locks it for this run: a second run into the same
// directory is refused while this one holds it. The caller releases the lock when done.
func claimOutDir(cmd *cobra.Command, flag, dir string) (*outlock.Lock, error) {
	made, err := outdir.Make(dir)
	if err != nil {
		return nil, usagef("--%s %q: %v", flag, dir, err)
	}
	if len(made) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "tetris-hil: created directory %s\n", strings.Join(made, ", "))
	}
	l, err := outlock.Dir(dir, commandLine())
	return tookOver(cmd, l, flag, dir, err)
}

// claimOutFile locks the output file path given by --flag (its directory must exist) for this
// run.
func claimOutFile(cmd *cobra.Command, flag, path string) (*outlock.Lock, error) {
	l, err := outlock.File(path, commandLine())
	return tookOver(cmd, l, flag, path, err)
}

func tookOver(cmd *cobra.Command, l *outlock.Lock, flag, path string, err error) (*outlock.Lock, error) {
	if err != nil {
		return nil, fmt.Errorf("--%s %q: %w", flag, path, err)
	}
	if l.TookOver != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "tetris-hil: %s\n", l.TookOver)
	}
	return l, nil
}

// commandLine is this process's command line, for a lock file to say who holds it.
func commandLine() string { return shellJoin(os.Args) }

// renamedFlag keeps a flag's old name working as a hidden, deprecated alias of its new one, so
// that scripts written against the old name go on running (with a note on standard error).
func renamedFlag(fs *pflag.FlagSet, oldName, newName string) {
	f := fs.Lookup(newName)
	fs.Var(f.Value, oldName, f.Usage)
	if f.NoOptDefVal != "" {
		fs.Lookup(oldName).NoOptDefVal = f.NoOptDefVal
	}
	_ = fs.MarkDeprecated(oldName, "use --"+newName)
}

// jsonFlag registers --json as every command has it: --json alone (or --json -) prints JSON on
// standard output, --json=FILE writes it to FILE.
func jsonFlag(fs *pflag.FlagSet, p *string, what string) {
	fs.StringVar(p, "json", "", "JSON of "+what+": --json (or --json -) on standard output, --json=FILE into FILE")
	fs.Lookup("json").NoOptDefVal = "-"
}
