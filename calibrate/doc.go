// Package calibrate measures a GPU server's transfer times and fits the α-β (Hockney) model
// T(m) = α + β·m per ordered GPU pair (Tetris §4.1–4.2, Figure 13): the file the emulator's
// calibration transfer model reads (calibrate/model).
//
// A model.Plan says what to measure: ordered GPU pairs, message sizes, warm-ups and repetitions, the
// copy kind (copy engines or an SM kernel) and the traffic patterns: Isolated (one pair at a time)
// and Permutation (every GPU sends at once along a permutation, as one circuit round does; by
// default the n−1 cyclic shifts, so every ordered pair is measured under load). Run starts one
// pinned worker process per GPU (gpu/bench.StartWorkers), times batches of copies with CUDA events
// in the sending process behind the spin-kernel latch (as nvbandwidth does), releases the copies of
// a permutation at one host-clock instant, checks the copied bytes on a sample of sizes, records
// each size's median, spread and the sender's telemetry, and reports progress after every step so
// that an interrupted run keeps a partial file that a later Run resumes.
//
// Fit is the robust fit of one pair: least squares weighted by relative error, outliers rejected
// by the median-absolute-deviation rule, a Theil–Sen cross-check, and a two-piece fit where the
// copy path changes at some size (a knee).
//
// Measuring imports the GPU layer; the model side (calibrate/model) does not, so the emulator
// never reaches GPU code.
package calibrate
