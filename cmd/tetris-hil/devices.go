package main

import (
	"fmt"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
)

func init() { subcommands = append(subcommands, newDevicesCmd) }

// fakeGPUFlags are --fake and --fake-gpus, shared by the commands that touch GPUs.
type fakeGPUFlags struct {
	fake bool
	gpus int
}

func (f *fakeGPUFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.fake, "fake", false, "use a fake 8-GPU NVLink server (a DGX H200) instead of NVML")
	cmd.Flags().IntVar(&f.gpus, "fake-gpus", 8, "number of GPUs of the fake server (with --fake)")
}

func (f *fakeGPUFlags) open() (*nvml.Lib, error) {
	if f.gpus < 1 || f.gpus > 64 {
		return nil, usagef("--fake-gpus %d: want 1..64", f.gpus)
	}
	return nvml.Open(nvml.Options{Fake: f.fake, FakeGPUs: f.gpus})
}

// cudaVisible is CUDA_VISIBLE_DEVICES, nil when unset (set and empty means no GPU for CUDA).
func cudaVisible() *string {
	if v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES"); ok {
		return &v
	}
	return nil
}

func newDevicesCmd() *cobra.Command {
	var ff fakeGPUFlags
	var checkWorkers bool
	var jsonOut string
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the GPUs (NVML): identity, NUMA node and local CPUs, clocks, and the topology matrix",
		Long: `devices lists what NVML reports: per GPU its index and CUDA ordinal (mapped by PCI bus id,
honouring CUDA_VISIBLE_DEVICES), UUID, name, PCI bus id, memory, NUMA node, the CPUs local to it
(workers are pinned to these), NVLinks up, clocks, temperature and throttle reasons; per pair the
PCIe topology level, P2P support and NVLink, printed as a matrix like nvidia-smi topo -m.

--check-workers then starts a worker process per GPU, pinned from birth to the GPU's CPUs (with
the CUDA engine, or the fake one under --fake), and has each check that all its threads run on
exactly those CPUs (of the ones this process may use); exit status 1 if any does not.`,
		Example: `  tetris-hil devices --fake
  tetris-hil devices --json > inventory.json
  CUDA_VISIBLE_DEVICES=4,5 tetris-hil devices --check-workers`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			lib, err := ff.open()
			if err != nil {
				return err
			}
			defer lib.Close()
			inv, err := lib.Inventory(cudaVisible())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonOut == "-" {
				return nvml.WriteJSON(out, inv)
			} else if jsonOut != "" {
				if err := safefile.WriteStream(jsonOut, func(w io.Writer) error { return nvml.WriteJSON(w, inv) }); err != nil {
					return fmt.Errorf("--json %s: %w", jsonOut, err)
				}
				_, err := fmt.Fprintf(out, "wrote %s\n", jsonOut)
				return err
			}
			if err := nvml.WriteTable(out, inv); err != nil {
				return err
			}
			fmt.Fprintln(out)
			if err := nvml.WriteMatrix(out, inv); err != nil {
				return err
			}
			if inv.Fake {
				if err := writeFakeAffinityNote(out, inv); err != nil {
					return err
				}
			}
			if checkWorkers {
				return checkWorkerPinning(cmd, lib, ff.fake, inv)
			}
			return nil
		},
	}
	ff.register(cmd)
	jsonFlag(cmd.Flags(), &jsonOut, "the inventory, instead of the tables")
	cmd.Flags().BoolVar(&checkWorkers, "check-workers", false, "start a pinned worker per GPU and check every thread's CPUs")
	return cmd
}

// writeFakeAffinityNote says what pinning to the fake CPU sets means on this machine: the kernel
// can only pin to CPUs that exist here, so workers get the intersection.
func writeFakeAffinityNote(w io.Writer, inv *nvml.Inventory) error {
	avail, err := affinity.Available()
	if err != nil {
		return err
	}
	var parts []string
	for _, g := range inv.GPUs {
		set, err := affinity.Parse(g.CPUAffinity)
		if err != nil {
			return err
		}
		here := set.Intersect(avail)
		s := here.String()
		if len(here) == 0 {
			s = "none, left on " + avail.String()
		}
		parts = append(parts, fmt.Sprintf("GPU%d %s", g.Index, s))
	}
	_, err = fmt.Fprintf(w, "\nFake CPU affinity: this machine lets tetris-hil use CPUs %s, so a worker is pinned to the\nCPUs of its GPU's fake set that exist here: %s.\n", avail, strings.Join(parts, "; "))
	return err
}

// checkWorkerPinning checks a worker on every GPU CUDA can see (CUDA_VISIBLE_DEVICES hides the
// others: a worker could not open them).
func checkWorkerPinning(cmd *cobra.Command, lib *nvml.Lib, fake bool, inv *nvml.Inventory) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary to start workers: %w", err)
	}
	cfg := bench.Config{Lib: lib, Engine: "cuda", Command: []string{exe, "worker"}, Visible: cudaVisible(),
		Timeout: 60 * time.Second, Log: os.Stderr}
	if fake {
		cfg.Engine = "fake"
	}
	var gpus []int
	for _, g := range inv.GPUs {
		if g.CUDAOrdinal >= 0 {
			gpus = append(gpus, g.Index)
		}
	}
	if len(gpus) == 0 {
		return usagef("--check-workers: CUDA_VISIBLE_DEVICES hides every GPU: no worker to check")
	}
	ps, err := bench.CheckPinning(cmd.Context(), cfg, gpus)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\nWorker pinning (%s engine):\n", cfg.Engine)
	if err := bench.WritePinning(out, ps); err != nil {
		return err
	}
	for _, p := range ps {
		if !p.OK {
			return &exitError{code: 1, msg: fmt.Sprintf("worker pinning check failed for GPU %d", p.GPU)}
		}
	}
	return nil
}
