package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
)

// Pinning is the result of the pinning check for one GPU's worker.
type Pinning struct {
	GPU      int    `json:"gpu"`
	NVMLCPUs string `json:"nvml_cpus"` // the GPU's local CPUs as NVML reports them
	Want     string `json:"want"`      // the part of them this process may use: what the worker must run on
	Got      string `json:"got"`       // what every thread of the worker runs on, by its own check
	Threads  int    `json:"threads"`   // threads the worker checked
	PID      int    `json:"pid"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
}

// CheckPinning starts one pinned worker per GPU in gpus (one at a time), has it check all its
// threads twice (at start and after it has been serving), and compares what it runs on with the
// GPU's NVML CPU set cut to the CPUs this process may use. A worker that fails to start is
// reported, not fatal, so one bad GPU does not hide the others. cfg.Src, Dst, Sizes and Reps are
// not used.
func CheckPinning(ctx context.Context, cfg Config, gpus []int) ([]Pinning, error) {
	if cfg.Lib == nil || len(cfg.Command) == 0 {
		return nil, errors.New("pinning check config: Lib and Command are required")
	}
	inv, err := cfg.Lib.Inventory(cfg.Visible)
	if err != nil {
		return nil, err
	}
	avail, err := affinity.Available()
	if err != nil {
		return nil, err
	}
	cfg.Unpinned = false
	var out []Pinning
	for _, gpu := range gpus {
		dev, err := device(inv, gpu)
		if err != nil {
			return nil, err
		}
		nvmlSet, err := cfg.Lib.CPUs(gpu)
		if err != nil {
			out = append(out, Pinning{GPU: gpu, Error: err.Error()})
			continue
		}
		want := nvmlSet.Intersect(avail)
		if len(want) == 0 {
			want = avail
		}
		p := Pinning{GPU: gpu, NVMLCPUs: nvmlSet.String(), Want: want.String()}
		w, err := start(ctx, cfg, dev)
		if err != nil {
			p.Error = err.Error()
			out = append(out, p)
			continue
		}
		h := w.Hello()
		p.Got, p.Threads, p.PID = h.CPUs, h.Threads, h.PID
		h2, err := w.Check(ctx)
		if err != nil {
			p.Error = err.Error()
		} else if h2.CPUs != h.CPUs {
			p.Error = fmt.Sprintf("threads moved from %s to %s while serving", h.CPUs, h2.CPUs)
		}
		if err := w.Close(); err != nil && p.Error == "" {
			p.Error = err.Error()
		}
		p.OK = p.Error == "" && p.Got == p.Want
		out = append(out, p)
	}
	return out, nil
}

// WritePinning prints the pinning check as a table.
func WritePinning(w io.Writer, ps []Pinning) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tNVML CPUS\tWANT\tWORKER PID\tTHREADS\tWORKER CPUS\tRESULT")
	for _, p := range ps {
		res := "ok"
		if !p.OK {
			res = "MISMATCH"
			if p.Error != "" {
				res = "FAILED: " + p.Error
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\n", p.GPU, brief(p.NVMLCPUs), brief(p.Want), p.PID, p.Threads, brief(p.Got), res)
	}
	return tw.Flush()
}

// brief keeps long CPU lists from breaking the table.
func brief(list string) string {
	if len(list) <= 40 {
		return list
	}
	s, err := affinity.Parse(list)
	if err != nil {
		return list[:37] + "..."
	}
	return fmt.Sprintf("%s (%d CPUs)", list[:30]+"...", len(s))
}
