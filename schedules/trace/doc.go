// Package trace is the trace format of tetris-hil: a sequence of GPU-to-GPU demand matrices, one
// per MoE layer and All-to-All phase (dispatch, combine), with the metadata that says where they
// came from (model, GPUs, hidden size, dtype, tokens, top-k, expert placement, provenance and
// licence).
//
// The canonical form is versioned JSON (Read, Write). The package also reads what captures
// produce: a CSV matrix (ReadCSV), NumPy .npy files (ReadNPY) and token-routing JSONL written by
// routing loggers (ImportRouting), and writes CSV and .npy back for round trips. Every reader
// rejects bad input with one error that names the file, the line or field, and the value.
//
// Synthetic traces and traces built from per-expert totals live in the synth subpackage; a
// built-in default trace derived from real Mixtral-8x7B routing counts is embedded (Default).
package trace
