// Command mkdefault writes the built-in default trace (synth.DefaultTrace) in canonical form.
// Run through `go generate ./schedules/trace`; a test checks that the file is current.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

func main() {
	out := flag.String("o", "default_trace.json", "output file")
	flag.Parse()
	t, err := synth.DefaultTrace()
	if err == nil {
		var b []byte
		if b, err = t.Marshal(); err == nil {
			err = safefile.WriteFile(*out, b)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdefault:", err)
		os.Exit(1)
	}
}
