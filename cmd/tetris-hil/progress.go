package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// showProgress says whether to draw a progress bar on w: mode on, off, or auto (only on a
// terminal).
func showProgress(mode string, w io.Writer) bool {
	switch mode {
	case "on":
		return true
	case "off":
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress returns a progress callback drawing a bar on w (nil when showProgress says no) and
// the function that clears the bar at the end.
func newProgress(w io.Writer, mode, what string, total int) (func(done, total int), func()) {
	if !showProgress(mode, w) {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	return func(done, _ int) { _ = bar.Set(done) }, func() { _ = bar.Finish() }
}
