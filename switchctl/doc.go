// Package switchctl drives the 2×2 switches of a Beneš fabric in real hardware: a small
// Controller interface, a registry of backends by name (database/sql style), the address type
// (stage, index), the change log that records when each change was commanded and when it settled,
// the wiring map that says which channel or pin drives each switch, and the bench that measures a
// controller's T_r and T_w.
//
// A 2×2 switch is in Bar or Cross under external control (Tetris §2.1). On the electroholographic
// switch of Er-El and Feitelson (§2.2–§2.3) switching itself is fast but the receiver needs
// milliseconds to resynchronise, and requests to the control station are serialised while the
// settle times overlap: a change costs T_c = T_r + T_w, k simultaneous changes about k·T_r + T_w.
// The change log keeps both ends of every change so the live runner can compare what the
// hardware did with the emulator's timeline.
//
// Backends live in subpackages and register themselves when imported: fake (in memory),
// serialboard ("serial" and the single-switch "osw22" dialect), gpio, crystal. This package
// imports none of the scheduler or emulator packages; the live runner translates addresses.
package switchctl
