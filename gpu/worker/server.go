package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// EnvExpectCPUs carries the CPU list a pinned worker was started with; the worker checks its
// threads against it. Without it the worker checks that all its threads agree.
const EnvExpectCPUs = "TETRIS_HIL_WORKER_CPUS"

// Config is a worker's command line; Flags and Args keep the two sides of it in one place.
type Config struct {
	Device        transfer.Device
	Engine        string // transfer driver name
	EngineOptions string
}

// Flags registers the worker's flags on fs.
func (c *Config) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&c.Device.GPU, "gpu", 0, "NVML index of the GPU (names the worker)")
	fs.IntVar(&c.Device.CUDAOrdinal, "cuda-ordinal", 0, "CUDA ordinal of the GPU in this environment")
	fs.StringVar(&c.Device.BusID, "bus-id", "", "PCI bus id the CUDA ordinal must have")
	fs.StringVar(&c.Engine, "engine", "cuda", "transfer engine driver")
	fs.StringVar(&c.EngineOptions, "engine-options", "", "driver-specific options")
}

// Args is the command line that Flags parses back into c.
func (c Config) Args() []string {
	return []string{
		fmt.Sprintf("--gpu=%d", c.Device.GPU),
		fmt.Sprintf("--cuda-ordinal=%d", c.Device.CUDAOrdinal),
		"--bus-id=" + c.Device.BusID,
		"--engine=" + c.Engine,
		"--engine-options=" + c.EngineOptions,
	}
}

// ProtocolOutput reserves this process's stdout for the protocol: it returns a new file for the
// original stdout and points file descriptor 1 at stderr, so that anything else that prints to
// stdout (a driver warning, a stray debug line) lands in the log instead of corrupting the JSON
// lines. A worker calls it first thing.
func ProtocolOutput() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicating stdout: %w", err)
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pointing stdout at stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

// Main is the worker process: it checks its threads' CPUs, opens the engine, says hello on out
// and serves requests from in until quit, end of input or ctx ends.
func Main(ctx context.Context, cfg Config, in io.Reader, out io.Writer) (err error) {
	enc := json.NewEncoder(out)
	hello, err := check(cfg)
	if err != nil {
		_ = enc.Encode(Response{Error: err.Error()})
		return err
	}
	eng, err := transfer.Open(ctx, cfg.Engine, transfer.Config{Device: cfg.Device, Options: cfg.EngineOptions})
	if err != nil {
		err = fmt.Errorf("opening %s engine on GPU %d: %w", cfg.Engine, cfg.Device.GPU, err)
		_ = enc.Encode(Response{Error: err.Error()})
		return err
	}
	defer eng.Close()
	// The GPU a compiled replay's jobs kept open, released before the engine.
	defer func() {
		if rerr := shared.ReleaseExecutor(cfg.Engine); rerr != nil && err == nil {
			err = fmt.Errorf("GPU %d: releasing the compiled replay's GPU: %w", cfg.Device.GPU, rerr)
		}
	}()
	if err := enc.Encode(Response{Hello: &hello}); err != nil {
		return err
	}
	return serve(ctx, cfg, eng, in, enc)
}

// check is the pinning check: every thread of this process must be on the CPUs the coordinator
// started it with.
func check(cfg Config) (Hello, error) {
	h := Hello{PID: os.Getpid(), Device: cfg.Device, Engine: cfg.Engine}
	var want affinity.Set
	if list, ok := os.LookupEnv(EnvExpectCPUs); ok {
		s, err := affinity.Parse(list)
		if err != nil {
			return h, fmt.Errorf("%s: %w", EnvExpectCPUs, err)
		}
		want = s
	} else {
		s, err := affinity.Available()
		if err != nil {
			return h, err
		}
		want = s
	}
	n, err := affinity.CheckThreads("/proc/self", want)
	if err != nil {
		return h, fmt.Errorf("affinity check on GPU %d: %w", cfg.Device.GPU, err)
	}
	h.CPUs, h.Threads = want.String(), n
	return h, nil
}

func serve(ctx context.Context, cfg Config, eng transfer.Engine, in io.Reader, enc *json.Encoder) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxMessage)
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("reading request %q: %w", sc.Text(), err)
		}
		if req.Op == OpQuit {
			return enc.Encode(Response{ID: req.ID})
		}
		resp := handle(ctx, cfg, eng, req)
		resp.ID = req.ID
		if err := enc.Encode(resp); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("reading a request: %w", ErrTooLong)
	}
	return sc.Err()
}

func handle(ctx context.Context, cfg Config, eng transfer.Engine, req Request) Response {
	var resp Response
	var err error
	switch req.Op {
	case OpExport:
		resp.Buffer, resp.Handle, err = eng.Export(ctx, req.Bytes)
	case OpImport:
		resp.Buffer, err = eng.Import(ctx, req.Handle)
	case OpPeer:
		if req.Peer == nil {
			err = errors.New("peer request without a peer device")
			break
		}
		resp.Buffer, err = eng.Peer(ctx, *req.Peer, req.Bytes)
	case OpCopy:
		if req.Copy == nil {
			err = errors.New("copy request without a copy")
			break
		}
		var tm transfer.Timing
		tm, err = eng.Copy(ctx, req.Buffer, *req.Copy)
		for _, d := range tm.Times {
			resp.TimesNS = append(resp.TimesNS, d.Nanoseconds())
		}
		resp.HostStartNS, resp.HostEndNS = tm.HostStart.Nanoseconds(), tm.HostEnd.Nanoseconds()
	case OpFree:
		err = eng.Free(req.Buffer)
	case OpRun:
		err = runJob(ctx, cfg, req.Job)
	case OpCheck:
		var h Hello
		h, err = check(cfg)
		resp.Hello = &h
	default:
		err = fmt.Errorf("unknown operation %q", req.Op)
	}
	if err != nil {
		resp.Error = err.Error()
		switch {
		case errors.Is(err, transfer.ErrIPCUnsupported):
			resp.Code = CodeIPCUnsupported
		case errors.Is(err, transfer.ErrCorrupt):
			resp.Code = CodeCorrupt
		}
	}
	return resp
}
