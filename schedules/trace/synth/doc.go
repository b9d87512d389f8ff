// Package synth makes demand traces without a GPU: synthetic MoE All-to-All traffic with the skew
// and layer-to-layer variation of Tetris §4.2 (Generate), and GPU-to-GPU matrices from measured
// per-expert routing totals (FromCounts), which is how the built-in default trace is made.
//
// Everything is deterministic per seed on every platform: the random numbers come from this
// package's own SplitMix64 generator and all sampling is integer arithmetic.
package synth
