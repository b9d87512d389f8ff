package synth_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

func ExampleGenerate() {
	m, _ := synth.LookupModel("mixtral-8x22b")
	tr, err := synth.Generate(synth.Config{Model: m, GPUs: 8, TokensPerGPU: 1024, Layers: 2, Skew: 1, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each GPU's 1024 tokens go to 2 experts each, 6144 bf16 elements per routing:
	// 1024 × 2 × 6144 × 2 = 25165824 bytes leave every GPU (its own experts included).
	for _, mx := range tr.Matrices {
		if mx.Phase != "dispatch" {
			continue
		}
		var row0 int64
		for _, v := range mx.Bytes[0] {
			row0 += v
		}
		fmt.Println(mx.Label(), "GPU 0 sends", row0, "bytes")
	}
	// Output:
	// layer 0 dispatch GPU 0 sends 25165824 bytes
	// layer 1 dispatch GPU 0 sends 25165824 bytes
}
