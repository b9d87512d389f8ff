package synth

import (
	"fmt"
	"sort"
	"strings"
)

// Model is what the generator needs to know about an MoE model.
type Model struct {
	Name          string
	HFName        string // Hugging Face id, for provenance
	Hidden        int    // hidden size: elements per token sent to an expert
	Experts       int    // routed experts per layer
	SharedExperts int    // always-on experts: computed locally, so no All-to-All traffic
	TopK          int    // routed experts per token
	Layers        int
	DenseLayers   []int // layers with a dense FFN instead of experts: no All-to-All
}

// Presets are the models of Tetris §4.1.
var Presets = map[string]Model{
	"mixtral-8x7b":     {Name: "mixtral-8x7b", HFName: "mistralai/Mixtral-8x7B-v0.1", Hidden: 4096, Experts: 8, TopK: 2, Layers: 32},
	"mixtral-8x22b":    {Name: "mixtral-8x22b", HFName: "mistralai/Mixtral-8x22B-v0.1", Hidden: 6144, Experts: 8, TopK: 2, Layers: 56},
	"deepseek-moe-16b": {Name: "deepseek-moe-16b", HFName: "deepseek-ai/deepseek-moe-16b-base", Hidden: 2048, Experts: 64, SharedExperts: 2, TopK: 6, Layers: 28, DenseLayers: []int{0}},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var ns []string
	for n := range Presets {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// LookupModel returns a preset by name.
func LookupModel(name string) (Model, error) {
	m, ok := Presets[strings.ToLower(name)]
	if !ok {
		return Model{}, fmt.Errorf("unknown model %q (want %s, or custom)", name, strings.Join(PresetNames(), ", "))
	}
	return m, nil
}

func (m *Model) check() error {
	switch {
	case m.Hidden <= 0:
		return fmt.Errorf("model %s: hidden size %d: want at least 1", m.Name, m.Hidden)
	case m.Experts <= 0:
		return fmt.Errorf("model %s: experts %d: want at least 1", m.Name, m.Experts)
	case m.TopK <= 0 || m.TopK > m.Experts:
		return fmt.Errorf("model %s: top-k %d: want 1..%d (the number of experts)", m.Name, m.TopK, m.Experts)
	case m.SharedExperts < 0:
		return fmt.Errorf("model %s: shared experts %d is negative", m.Name, m.SharedExperts)
	}
	return nil
}

func (m *Model) dense(layer int) bool {
	for _, l := range m.DenseLayers {
		if l == layer {
			return true
		}
	}
	return false
}
