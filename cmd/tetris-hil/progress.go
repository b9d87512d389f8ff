package main

import (
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
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
//
// At --log-level debug every finished run is also logged with the time so far, bar or not.
func newProgress(w io.Writer, mode, what string, total int) (func(done, total int), func()) {
	start := time.Now()
	debug := func(done, total int) {
		logger.Debug().Int("done", done).Int("total", total).Str("elapsed", time.Since(start).Round(time.Microsecond).String()).Msg(what + ": run finished")
	}
	if !showProgress(mode, w) {
		if logger.GetLevel() > zerolog.DebugLevel {
			return nil, func() {}
		}
		return debug, func() {}
	}
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	return func(done, total int) { _ = bar.Set(done); debug(done, total) }, func() { _ = bar.Finish() }
}

// checkProgress checks a --progress value.
func checkProgress(mode string) error {
	switch mode {
	case "auto", "on", "off":
		return nil
	}
	return usagef("--progress %q: want auto, on or off", mode)
}
