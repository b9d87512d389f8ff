package rnbmap

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Strategy names how a plan's circuits get their Beneš paths.
type Strategy string

const (
	// Looping routes, at every planned start, the set of circuits live then with plain looping
	// and gives the starting circuits the paths they get there (issue 4; the default).
	Looping Strategy = "looping"
	// AvoidLive gives a starting circuit a path that is free of every circuit the plan has live
	// then, given the paths those already hold, and falls back to Looping's path when none is.
	AvoidLive Strategy = "avoid-live"
)

// ParseStrategy accepts a strategy name; the empty string is Looping, the default.
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case "", Looping:
		return Looping, nil
	case AvoidLive:
		return AvoidLive, nil
	}
	return "", fmt.Errorf("rnbmap: mapping strategy %q is not %q or %q", s, Looping, AvoidLive)
}

// Mapping is a plan's paths under one strategy.
type Mapping struct {
	// Paths is indexed like the plan.
	Paths [][]benes.Traversal
	// Fallbacks are the plan indices, in mapping order, of the circuits for which AvoidLive found
	// no free path and which took Looping's path instead; always empty under Looping.
	Fallbacks []int
}

// Map gives every circuit of plan a path through f with strategy s (see Paths and
// AvoidLivePaths); an unknown strategy is an error.
func Map(f *benes.Fabric, plan []Circuit, s Strategy) (Mapping, error) {
	switch s {
	case Looping, "":
		paths, err := Paths(f, plan)
		return Mapping{Paths: paths}, err
	case AvoidLive:
		return AvoidLivePaths(f, plan)
	}
	return Mapping{}, fmt.Errorf("rnbmap: mapping strategy %q is not %q or %q", s, Looping, AvoidLive)
}
