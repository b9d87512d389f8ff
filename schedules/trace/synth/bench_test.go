package synth

import "testing"

// One Mixtral-8x22B layer pair on 8 GPUs at 2048 tokens per GPU: 32768 top-2 routings.
func BenchmarkGenerateMixtral8x22BLayer(b *testing.B) {
	m := Presets["mixtral-8x22b"]
	for b.Loop() {
		if _, err := Generate(Config{Model: m, GPUs: 8, TokensPerGPU: 2048, Layers: 1, Skew: 1, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// One DeepSeek-MoE layer on 64 GPUs: 131072 tokens × top-6 of 64 experts.
func BenchmarkGenerateDeepSeek64GPUs(b *testing.B) {
	m := Presets["deepseek-moe-16b"]
	for b.Loop() {
		if _, err := Generate(Config{Model: m, GPUs: 64, TokensPerGPU: 2048, Layers: 2, Skew: 1, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
