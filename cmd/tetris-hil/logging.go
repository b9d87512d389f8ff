package main

import (
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/tetris-hil/tetris-hil/gpu/worker"
)

// isTerminal reports whether w is a terminal (colour and progress bars only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// debugWorker logs a worker process that has started and answered, at debug level: which GPU,
// its pid and engine, the CPUs it is pinned to, how long it took (CUDA context creation is the
// usual slow part).
func debugWorker(h worker.Hello, took time.Duration) {
	logger.Debug().Int("gpu", h.Device.GPU).Int("cuda_ordinal", h.Device.CUDAOrdinal).Str("bus_id", h.Device.BusID).
		Int("pid", h.PID).Str("engine", h.Engine).Str("cpus", h.CPUs).Int("threads", h.Threads).
		Str("took", took.Round(time.Microsecond).String()).Msg("worker started")
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
