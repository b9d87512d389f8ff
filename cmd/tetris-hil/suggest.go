package main

import (
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggest returns the candidates nearest to word (up to three, all at the nearest distance):
// equal but for case, starting with it or it with them, or within an edit distance of about a
// third of its length (a typo or two), all compared without case.
func suggest(word string, candidates []string) []string {
	w := strings.ToLower(word)
	type scored struct {
		name string
		d    int
	}
	var out []scored
	limit := max(1, len([]rune(w))/3)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(w, lc)
		switch {
		case lc == w:
			d = 0
		case len(w) >= 3 && (strings.HasPrefix(lc, w) || strings.HasPrefix(w, lc)):
			d = min(d, 1)
		case d > limit:
			continue
		}
		out = append(out, scored{c, d})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	if len(out) > 0 && strings.EqualFold(out[0].name, word) {
		return []string{out[0].name} // the same name but for case: nothing else to offer
	}
	// The nearest only: "tetirs" is one swap from tetris and two edits from tetris+.
	names := make([]string, 0, len(out))
	for _, s := range out {
		if len(names) < 3 && s.d == out[0].d {
			names = append(names, s.name)
		}
	}
	return names
}

// didYouMean is "; did you mean X?" for the candidates suggest finds, or "".
func didYouMean(word string, candidates []string, prefix string) string {
	s := suggest(word, candidates)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = prefix + s[i]
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// editDistance is the optimal-string-alignment distance of a and b, by runes: insertions,
// deletions, substitutions and swaps of two neighbours ("shwo" for "show") count one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// commandNames lists c's subcommands (and aliases) a user may type.
func commandNames(c *cobra.Command) []string {
	var out []string
	for _, s := range c.Commands() {
		if !s.Hidden && s.Name() != "help" {
			out = append(out, s.Name())
			out = append(out, s.Aliases...)
		}
	}
	return out
}

// unknownCommandError is the one-line refusal of a word that is no subcommand of c.
func unknownCommandError(c *cobra.Command, word string) error {
	return usagef("unknown command %q for %q%s (see %s --help)", word, c.CommandPath(),
		didYouMean(word, commandNames(c), ""), c.CommandPath())
}

// checkFirstWord refuses a first word that names no command before cobra parses the flags that
// follow it as the root's (emulat --matrix 0 would otherwise say "unknown flag: --matrix").
func checkFirstWord(root *cobra.Command, args []string) error {
	// Skip the root's own flags (--log-level warn, --log-format=json) to the first word.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		f := root.PersistentFlags().Lookup(strings.TrimLeft(args[0], "-"))
		if f != nil && f.Value.Type() != "bool" && !strings.Contains(args[0], "=") && len(args) > 1 {
			args = args[1:]
		}
		if f == nil {
			return nil // --help, --version, or a flag cobra will refuse itself
		}
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "__") ||
		args[0] == "help" || args[0] == "completion" { // cobra adds these two as it executes
		return nil
	}
	for _, s := range root.Commands() {
		if s.Name() == args[0] || s.HasAlias(args[0]) {
			return nil
		}
	}
	return unknownCommandError(root, args[0])
}

var unknownFlag = regexp.MustCompile(`^unknown flag: --([^\s=]+)`)

// flagSuggestion is "; did you mean --X?" for an unknown long flag of c, or "".
func flagSuggestion(c *cobra.Command, err error) string {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if c == nil || m == nil {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" {
			names = append(names, f.Name)
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return didYouMean(m[1], names, "--")
}

// unknownName is the refusal of a name that is none of known (an algorithm, a figure): the
// closest names, and where the full list is.
func unknownName(flag, what, name string, known []string, listedBy string) error {
	return usagef("%s %q: unknown %s%s (known: %s; %s lists them)", flag, name, what,
		didYouMean(name, known, ""), strings.Join(known, ", "), listedBy)
}
