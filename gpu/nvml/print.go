package nvml

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
)

// WriteJSON writes the inventory as indented JSON with a final newline.
func WriteJSON(w io.Writer, inv *Inventory) error {
	b, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteTable prints one line per GPU.
func WriteTable(w io.Writer, inv *Inventory) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	kind := "NVML"
	if inv.Fake {
		kind = "fake NVML"
	}
	fmt.Fprintf(tw, "%s: driver %s, CUDA %s, %d GPUs\n\n", kind, inv.DriverVersion, inv.CUDADriverVersion, len(inv.GPUs))
	fmt.Fprintln(tw, "GPU\tCUDA\tNAME\tPCI BUS ID\tMEMORY\tNUMA\tCPUS\tNVLINKS\tSM MHZ\tMAX SM\tTEMP\tTHROTTLE")
	for _, g := range inv.GPUs {
		ord := "-"
		if g.CUDAOrdinal >= 0 {
			ord = fmt.Sprint(g.CUDAOrdinal)
		}
		reasons := strings.Join(g.Telemetry.ThrottleReasons, ",")
		if reasons == "" {
			reasons = "none"
		}
		temp := fmt.Sprintf("%d C", g.Telemetry.TemperatureC)
		sm := fmt.Sprint(g.Telemetry.SMClockMHz)
		for _, u := range g.Telemetry.Unavailable {
			switch strings.SplitN(u, ":", 2)[0] {
			case "temperature":
				temp = "?"
			case "sm_clock":
				sm = "?"
			case "throttle_reasons":
				reasons = "?"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f GiB\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n",
			g.Index, ord, g.Name, g.PCIBusID, float64(g.MemoryBytes)/(1<<30), numa(g.NUMANode),
			briefCPUs(g.CPUAffinity), g.NVLinksUp, sm, g.MaxSMClockMHz, temp, reasons)
	}
	return tw.Flush()
}

// WriteMatrix prints the topology matrix the way `nvidia-smi topo -m` does.
func WriteMatrix(w io.Writer, inv *Inventory) error {
	n := len(inv.GPUs)
	link := make([][]string, n)
	for i := range link {
		link[i] = make([]string, n)
		link[i][i] = "X"
	}
	for _, p := range inv.Pairs {
		link[p.A][p.B], link[p.B][p.A] = p.Link, p.Link
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\t")
	for i := range n {
		fmt.Fprintf(tw, "GPU%d\t", i)
	}
	fmt.Fprintln(tw, "CPU Affinity\tNUMA Affinity")
	for i, g := range inv.GPUs {
		fmt.Fprintf(tw, "GPU%d\t", i)
		for j := range n {
			fmt.Fprintf(tw, "%s\t", link[i][j])
		}
		fmt.Fprintf(tw, "%s\t%s\n", briefCPUs(g.CPUAffinity), numa(g.NUMANode))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, `
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
`)
	return err
}

func numa(n int) string {
	if n < 0 {
		return "N/A"
	}
	return fmt.Sprint(n)
}

// briefCPUs shortens a CPU list for a table: a long list with a constant stride (round-robin
// numbering across sockets) becomes "first,second,...,last (n CPUs)".
func briefCPUs(list string) string {
	s, err := affinity.Parse(list)
	if err != nil || len(s) < 8 || strings.Count(list, ",") < 8 {
		return list
	}
	step := s[1] - s[0]
	for i := 2; i < len(s); i++ {
		if s[i]-s[i-1] != step {
			return list
		}
	}
	return fmt.Sprintf("%d,%d,...,%d (%d CPUs)", s[0], s[1], s[len(s)-1], len(s))
}
