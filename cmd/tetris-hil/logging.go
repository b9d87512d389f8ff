package main

import (
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal (colour and progress bars only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// debugSerial logs one exchange with a serial switch board at debug level: what was sent, what
// came back and how long it took (the numbers to compare with the wiring map's T_r and T_w).
func debugSerial(port, command, reply string, took time.Duration, err error) {
	ev := logger.Debug()
	if err != nil {
		ev = ev.Err(err)
	}
	ev.Str("port", port).Str("sent", command).Str("reply", reply).Str("took", took.String()).Msg("serial exchange")
}
