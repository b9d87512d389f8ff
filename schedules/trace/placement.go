package trace

import (
	"encoding/json"
	"fmt"
	"io"
)

// Placement says which GPU(s) hold each expert. With more GPUs than experts an expert has
// several replicas, and a routing from source GPU s goes to replica s mod (number of replicas):
// deterministic, and it spreads an expert's load evenly over its replicas.
type Placement struct {
	Name       string
	ExpertGPUs [][]int
}

// GPU is the GPU that serves a routing of expert e from source GPU src.
func (p *Placement) GPU(e, src int) int {
	r := p.ExpertGPUs[e]
	return r[src%len(r)]
}

// Contiguous puts experts on GPUs in blocks: with E ≥ G, GPU g holds experts
// [⌊g·E/G⌋, ⌊(g+1)·E/G⌋) (8 experts on 8 GPUs: expert e on GPU e; 64 on 8: 8 each); with
// E < G, expert e is replicated on GPUs [⌊e·G/E⌋, ⌊(e+1)·G/E⌋).
func Contiguous(experts, gpus int) Placement {
	p := Placement{Name: "contiguous", ExpertGPUs: make([][]int, experts)}
	if experts >= gpus {
		for g := 0; g < gpus; g++ {
			for e := g * experts / gpus; e < (g+1)*experts/gpus; e++ {
				p.ExpertGPUs[e] = []int{g}
			}
		}
		return p
	}
	for e := 0; e < experts; e++ {
		for g := e * gpus / experts; g < (e+1)*gpus/experts; g++ {
			p.ExpertGPUs[e] = append(p.ExpertGPUs[e], g)
		}
	}
	return p
}

// RoundRobin puts expert e on GPU e mod G; with E < G, expert e is replicated on every GPU g
// with g mod E = e.
func RoundRobin(experts, gpus int) Placement {
	p := Placement{Name: "round-robin", ExpertGPUs: make([][]int, experts)}
	for e := 0; e < experts; e++ {
		if experts >= gpus {
			p.ExpertGPUs[e] = []int{e % gpus}
			continue
		}
		for g := e; g < gpus; g += experts {
			p.ExpertGPUs[e] = append(p.ExpertGPUs[e], g)
		}
	}
	return p
}

// ParsePlacement builds a placement by name: "contiguous" or "round-robin".
func ParsePlacement(name string, experts, gpus int) (Placement, error) {
	if experts <= 0 || gpus <= 0 {
		return Placement{}, fmt.Errorf("placement %q needs experts > 0 and GPUs > 0, got %d and %d", name, experts, gpus)
	}
	switch name {
	case "contiguous":
		return Contiguous(experts, gpus), nil
	case "round-robin":
		return RoundRobin(experts, gpus), nil
	}
	return Placement{}, fmt.Errorf("unknown placement %q (want contiguous, round-robin or a JSON file)", name)
}

// ReadPlacement reads a placement file: a JSON array with one entry per expert, either the GPU
// ([0, 0, 1, 1, ...]) or the list of GPUs holding a replica ([[0, 4], [1, 5], ...]).
func ReadPlacement(r io.Reader, name string, experts, gpus int) (Placement, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Placement{}, fmt.Errorf("%s: %w", name, err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Placement{}, fmt.Errorf("%s: %w", name, jsonError(data, err))
	}
	if len(raw) != experts {
		return Placement{}, fmt.Errorf("%s: places %d experts, the model has %d", name, len(raw), experts)
	}
	p := Placement{Name: name, ExpertGPUs: make([][]int, experts)}
	for e, rm := range raw {
		var one int
		var many []int
		switch {
		case json.Unmarshal(rm, &one) == nil:
			many = []int{one}
		case json.Unmarshal(rm, &many) == nil:
		default:
			return Placement{}, fmt.Errorf("%s: entry %d = %s is neither a GPU number nor a list of them", name, e, rm)
		}
		if len(many) == 0 {
			return Placement{}, fmt.Errorf("%s: entry %d: expert %d has no GPU", name, e, e)
		}
		for _, g := range many {
			if g < 0 || g >= gpus {
				return Placement{}, fmt.Errorf("%s: entry %d: GPU %d is not in [0, %d)", name, e, g, gpus)
			}
		}
		p.ExpertGPUs[e] = many
	}
	return p, nil
}
