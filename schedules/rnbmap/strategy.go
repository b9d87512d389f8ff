package rnbmap

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Strategy names how a plan's circuits get their Beneš paths.
type Strategy string

const (
	// Earliest takes the plan's circuits in order and routes each on its own on the path that can
	// start first against the schedule so far, as Tetris would, re-timing it (the default).
	Earliest Strategy = "earliest"
	// Looping routes, at every planned start, the set of circuits live then with plain looping
	// and gives the starting circuits the paths they get there.
	Looping Strategy = "looping"
	// AvoidLive gives a starting circuit a path that is free of every circuit the plan has live
	// then, given the paths those already hold, and falls back to Looping's path when none is.
	AvoidLive Strategy = "avoid-live"
)

// Strategies lists the strategies, the default first.
var Strategies = []Strategy{Earliest, Looping, AvoidLive}

// ParseStrategy accepts a strategy name; the empty string is Earliest, the default.
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case "", Earliest:
		return Earliest, nil
	case Looping:
		return Looping, nil
	case AvoidLive:
		return AvoidLive, nil
	}
	return "", unknown(s)
}

func unknown(s string) error {
	return fmt.Errorf("rnbmap: mapping strategy %q is not %q, %q or %q", s, Earliest, Looping, AvoidLive)
}

// Mapping is a plan's paths under one strategy.
type Mapping struct {
	// Paths is indexed like the plan.
	Paths []benes.Path
	// Fallbacks are the plan indices, in mapping order, of the circuits for which AvoidLive found
	// no free path and which took Looping's path instead; always empty under the others.
	Fallbacks []int
	// Start and End, indexed like the plan, are the transmission intervals Earliest gives the
	// circuits; nil under the others, which keep the plan's intervals.
	Start, End []float64
}

// Map gives every circuit of plan a path through f with strategy s (see EarliestPaths, Paths and
// AvoidLivePaths; the empty strategy is Earliest); t is used by Earliest only. An unknown
// strategy is an error.
func Map(f *benes.Fabric, plan []Circuit, s Strategy, t Timing) (Mapping, error) {
	switch s {
	case Earliest, "":
		return EarliestPaths(f, plan, t)
	case Looping:
		paths, err := Paths(f, plan)
		return Mapping{Paths: paths}, err
	case AvoidLive:
		return AvoidLivePaths(f, plan)
	}
	return Mapping{}, unknown(string(s))
}
