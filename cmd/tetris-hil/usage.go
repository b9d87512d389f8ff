package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// tidyUsage makes every command of the tree answer bad usage the same way: exit 2 with one line
// that names the command, flag or argument. Cobra's own checks return plain errors (exit 1
// otherwise), and a command that only groups subcommands prints its help and exits 0 on an
// unknown subcommand; both are fixed here once rather than in each command's file.
func tidyUsage(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommandError(cmd, args[0])
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	} else if c.Args != nil {
		orig := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := orig(cmd, args); err != nil {
				var ue *usageError
				if errors.As(err, &ue) {
					return err
				}
				return usagef("%s: %v (see --help)", cmd.CommandPath(), err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		tidyUsage(sub)
	}
}

// pflag reports a flag value it cannot parse as `invalid argument "abc" for "-m, --matrix" flag:
// strconv.ParseInt: parsing "abc": invalid syntax`; flagValueError keeps the flag and the value
// and says what was wanted instead of quoting the parser.
var pflagInvalid = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (.*)$`)

func flagError(c *cobra.Command, err error) error {
	m := pflagInvalid.FindStringSubmatch(err.Error())
	if m == nil {
		if hint := flagSuggestion(c, err); hint != "" {
			return usagef("%v%s", err, hint)
		}
		return &usageError{err}
	}
	value, flag, why := m[1], m[2], m[3]
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		switch {
		case errors.Is(ne.Err, strconv.ErrRange):
			why = "out of range"
		case ne.Func == "ParseBool":
			why = "want true or false"
		case ne.Func == "ParseFloat":
			why = "want a number"
		default:
			why = "want an integer"
		}
	}
	return usagef("%s %q: %s", flag, value, why)
}

// emptyEntry refuses a list with an empty entry ("100Gbps,,200Gbps", or a trailing comma): the
// user meant a value there, and skipping it would run a different grid than the one asked for.
func emptyEntry(flag, list string) error {
	return usagef("--%s %q: an entry of the comma-separated list is empty", flag, list)
}

// timingChanged reports whether --tr, --tw, --batch or --serial-settle was given (exec then
// refuses them under the parallel model).
func (m *modelFlags) timingChanged() bool {
	if m.fs == nil {
		return false
	}
	for _, name := range []string{"tr", "tw", "batch", "serial-settle"} {
		if m.fs.Changed(name) {
			return true
		}
	}
	return false
}

// sourceName is what emulate ran on, for its table's opening line.
func (f *emulateFlags) sourceName() string {
	switch {
	case f.schedule != "":
		return "schedule " + f.schedule
	case f.src.path != "":
		return f.src.path
	}
	return trace.DefaultName
}

// unknownCommand is cobra's message for a first word that is no command of the root.
var unknownCommand = regexp.MustCompile(`^unknown command ".*" for "`)

// asUsage marks the errors cobra itself returns for bad usage (which reach run untyped).
func asUsage(err error) error {
	var ue *usageError
	var ee *exitError
	if err == nil || errors.As(err, &ue) || errors.As(err, &ee) {
		return err
	}
	if unknownCommand.MatchString(err.Error()) {
		return &usageError{fmt.Errorf("%v (see tetris-hil --help)", err)}
	}
	return err
}
