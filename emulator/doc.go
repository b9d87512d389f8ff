// Package emulator executes a circuit schedule in virtual time at the granularity of single 2×2
// switches (Tetris §4.1's simulator and hardware emulation) and reports what happened: a
// Result (completion time against lower bounds, reconfigurations, per-endpoint bubbles, time
// lost to RNB conflicts) and a schedules.Timeline.
//
// Execution follows completion events, not planned times (Tetris §3.3). A tour:
//
//   - NewOrder derives the schedule's dependency order once: who waits for whom, and which
//     switch changes (epochs) the schedule implies.
//   - Walker is the rules of walking an Order, as a state machine without a clock: told that a
//     circuit completed or a command settled, it returns the circuits that became ready, and
//     Flush hands out the switch changes to command now, grouped into commands. The emulator's
//     Run drives it in virtual time; the live runner drives the same Walker in real time, so
//     prediction and measurement differ only in their timings, never in code.
//   - Run (or RunOrder) executes a schedule with pluggable timing models: a TransferModel
//     (bandwidth, per-pair α-β from a calibration, or measured times) and a ReconfigModel (all
//     changes in parallel, or serialised through one controller as in Er-El and Feitelson
//     §2.3.3). TransferSpec and ReconfigSpec build them from what a command line gives (a
//     bandwidth, a calibration file and GPU map, a measured-times file; a model name, α_r, T_r,
//     T_w).
//   - Summarize turns any timeline (emulated or measured) into a Result: completion against the
//     lower bounds, bubbles, RNB waits.
//   - RunRecord is the file form of one execution, emulated or live: inputs with their SHA-256,
//     the tool version, the models, the result and the timeline. WriteChromeTrace exports a
//     timeline for Perfetto. Both are written as they are encoded, element by element, so that
//     a run of millions of circuits needs no memory for its files' text.
//   - The experiment subpackage plans, verifies, runs and compares many algorithms on many
//     matrices; sweep runs bandwidth × α_r grids on it; plot draws.
//
// Rules (DESIGN.md "Execution semantics"): all switches start in Bar and crossbar transmitters
// point nowhere. In partial mode each resource (transmitter, receiver, switch lane) is used in
// schedule order; consecutive users of a switch that need the same state form an epoch, and an
// epoch's reconfiguration is requested when every circuit of the previous epoch has completed.
// On a crossbar a transmitter re-points once its own and its receiver's previous circuits have
// completed. In barrier mode round r starts when round r−1 has ended, all of its changes are made
// together first, and it lasts at least its planned duration (counted from the end of its
// reconfiguration).
//
// Reconfiguration commands: every switch change requested at the same instant (everything that
// one completion event, or a round start, unlocks) is one command. Under the parallel model a
// command takes α_r from its request; under the controller model commands are served one at a
// time in order of request, each occupying the controller for T_r and then settling for T_w
// while later commands proceed.
//
// Timeline fields: Ready is when the circuit's transmitter and receiver were both free;
// PathReady when, in addition, every lane of its path was free and every switch whose state it
// needs could begin to change (the gap is time lost to RNB conflicts); ReconfigStart is the start
// of the latest reconfiguration it still waited for at PathReady (TransmitStart if none).
package emulator
