// Package hil is the live runner: it drives real GPUs (and optionally real switches) through a
// circuit schedule in real time and records the measured timeline beside the emulator's
// prediction for the same schedule and models. Tetris §4.1 executes each schedule with measured
// transfer times and injects the reconfiguration delays the scheduler incurs; here that happens
// live.
//
// A replay without a switch controller is compiled (Compile, ReplayCompiled): the walker's
// dependency order (emulator.Order) becomes one program per endpoint (package gpu/program), in
// which every circuit waits for its predecessors' end stamps and its reconfigurations' commands
// and then copies; a Device runs the programs without the host (program.Fake, in real or virtual
// time; gpu/program/cudaprog on a GPU) and the host builds the live record from the stamps
// (StampsTimeline). A property test holds the virtual-time device equal to the emulator. Every
// summary reports the harness's own cost per circuit (RunSummary.HarnessCost).
//
// With a switch controller, Replay walks the schedule with the emulator's Walker
// (emulator.NewWalker), the same state machine the emulator drives in virtual time: the walker
// decides which circuits are ready and
// which switch changes form one command; Replay only starts transfers, sends each command to a
// switch controller (or injects α_r with package delay when there is none), waits for the real
// completions and feeds their times back. Prediction and measurement therefore differ only in
// their timings, never in the rules.
//
// The seams are small interfaces defined here: Transfers (Workers: one pinned worker process per
// endpoint through package gpu/bench, on the CUDA engine or the fake one; Engines: fake engines
// in this process) and Switches (any switchctl.Controller: the in-memory fake, the serial board,
// GPIO), which Replay sends one command at a time, in order of request. Every time is a
// CLOCK_MONOTONIC reading (gpu/transfer.Monotonic), the one clock the workers stamp their copies
// with.
//
// The prediction uses the emulator with the models the live devices follow: FakeTransferModel
// (the fake engine's noise-free α-β) or a calibration, and for reconfiguration the emulator's
// ParallelReconfig (injected α_r) or SerialControllerModel (a controller driven one command at
// a time, T_r per change and T_w per command). Renice lets a replay run ahead of other work on
// a shared machine.
//
// Run replays a list of jobs into a run directory: manifest.json (inputs with hashes, tool,
// inventory, calibration, wiring, flags; complete or not), per job the schedule, the emulator's
// run record (the prediction), the measured run record (emulator.RunRecord with source "live",
// which verify --timeline accepts) and its Perfetto export, and summary.json with the live and
// predicted completion of every run and the per-circuit start and end differences. All files are
// written with internal/safefile. When the context ends (Ctrl-C), what was measured is kept, the
// manifest says incomplete, the switches are put safe and the clocks restored.
package hil
