package main

import (
	"bytes"
	"context"
	"testing"
)

// runCLI runs the CLI in process (logs at error level) and returns what it wrote to standard
// output and standard error, its exit status as the binary would report it, and the error.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	args = append([]string{"--log-level", "error"}, args...)
	root.SetArgs(args)
	// As run does: a first word that is no command is refused before cobra parses its flags.
	if err = checkFirstWord(root, args); err == nil {
		err = asUsage(root.ExecuteContext(context.Background()))
	}
	return out.String(), errOut.String(), exitCode(err), err
}

// cli is runCLI with standard output and standard error together.
func cli(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	stdout, stderr, code, err := runCLI(t, args...)
	return stdout + stderr, code, err
}
