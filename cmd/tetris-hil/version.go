package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
)

func init() { subcommands = append(subcommands, newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version, the commit it was built from and the Go version (also --version)",
		Long: `version prints what this binary was built from: the module and its version, the commit (from
the VCS stamp go build adds in a git checkout, or from -ldflags -X when there is none; a build
without either says so rather than print a bare "(devel)"), whether the tree had uncommitted
changes, and the Go version and platform. Result files record the same in their "tool" field.`,
		Example: `  tetris-hil version
  tetris-hil --version`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return writeVersion(cmd.OutOrStdout()) },
	}
}

func writeVersion(w io.Writer) error {
	b := provenance.ReadBuild()
	commit := b.Commit
	if commit == "" {
		commit = b.Source
	} else {
		if b.Modified {
			commit += " (with uncommitted changes)"
		}
		commit += " [" + b.Source + "]"
	}
	_, err := fmt.Fprintf(w, "%s\nmodule   %s\nversion  %s\ncommit   %s\ngo       %s %s\n",
		provenance.Tool(), b.Module, b.Version, commit, b.Go, b.Platform)
	return err
}
