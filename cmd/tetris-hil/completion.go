package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// flagValues are the values the shell completion scripts offer for a flag, wherever it appears;
// a flag whose value is a comma-separated list completes each entry.
var flagValues = map[string]struct {
	values func() []string
	list   bool
}{
	"algo":           {func() []string { return append(schedules.Names(), "all") }, true},
	"progress":       {fixed("auto", "on", "off"), false},
	"log-level":      {fixed("debug", "info", "warn", "error"), false},
	"log-format":     {fixed("console", "json"), false},
	"fabric":         {fixed("benes", "crossbar"), false},
	"phase":          {fixed("dispatch", "combine"), false},
	"layout":         {fixed("layers", "pairs"), false},
	"reconfig-model": {fixed("parallel", "controller"), false},
	"copy":           {fixed("ce", "sm"), false},
	"pattern":        {fixed("isolated", "permutation"), true},
	"format":         {fixed("auto", "json", "csv", "npy", "routing-jsonl", "expert-counts"), false},
}

func fixed(vs ...string) func() []string { return func() []string { return vs } }

// registerCompletions gives every flag of c's tree that flagValues names its values.
func registerCompletions(c *cobra.Command) {
	for name, v := range flagValues {
		if c.LocalNonPersistentFlags().Lookup(name) == nil && c.PersistentFlags().Lookup(name) == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc(name, completeValues(v.values, v.list))
	}
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

// completeValues offers values (for a list, after the entries already typed).
func completeValues(values func() []string, list bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix := ""
		if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
			prefix = toComplete[:i+1]
		}
		var out []string
		for _, v := range values() {
			out = append(out, prefix+v)
		}
		d := cobra.ShellCompDirectiveNoFileComp
		if list {
			d |= cobra.ShellCompDirectiveNoSpace
		}
		return out, d
	}
}
