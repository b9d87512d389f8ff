package hil

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// FakeTransferModel is the emulator's view of the fake engine: circuit src→dst takes the fake
// model's noise-free α + bytes/B of the GPU pair (gpuOf[src], gpuOf[dst]), exactly what the fake
// engine draws its times around. It is what a replay on the fake engine is predicted with.
func FakeTransferModel(m fake.Model, gpuOf []int) emulator.TransferModel {
	return fakeModel{m: m, gpuOf: slices.Clone(gpuOf)}
}

type fakeModel struct {
	m     fake.Model
	gpuOf []int
}

func (f fakeModel) Name() string {
	return fmt.Sprintf("fake engine α=%s B=%s (±%g%% per pair)", units.FormatSeconds(f.m.Alpha), units.FormatBandwidth(f.m.Bandwidth), f.m.Spread*100)
}

func (f fakeModel) Seconds(src, dst int, bytes int64) (float64, error) {
	if src < 0 || src >= len(f.gpuOf) || dst < 0 || dst >= len(f.gpuOf) {
		return 0, fmt.Errorf("fake engine model: endpoint %d→%d, the map covers endpoints 0..%d", src, dst, len(f.gpuOf)-1)
	}
	if bytes == 0 {
		return 0, nil // no copy is made
	}
	return f.m.ExpectedSeconds(f.gpuOf[src], f.gpuOf[dst], bytes), nil
}

// MinSeconds is emulator.SplitLowerBound over the fake model's one or two lines (α, then a
// slower rate beyond the knee).
func (f fakeModel) MinSeconds(src, dst int, bytes int64) (float64, error) {
	at := []int64{f.m.KneeBytes, f.m.KneeBytes + 1}
	return emulator.SplitLowerBound(bytes, at, func(b int64) (float64, error) { return f.Seconds(src, dst, b) })
}

// SerialControllerModel is how a replay drives a switch controller of B = 1 (T_r per change):
// ControllerModel(ctlmodel.Model{TR: tr, TW: tw, Batch: 1}).
func SerialControllerModel(tr, tw float64) emulator.ReconfigModel {
	return ControllerModel(ctlmodel.Model{TR: tr, TW: tw, Batch: 1})
}

// ControllerModel is how a replay drives a switch controller whose timing is m (package ctlmodel:
// a command of k changes takes ⌈k/B⌉·T_r + T_w): one command at a time, in order of request.
// The controllers of package switchctl return from Apply only once the batch has settled, and
// Replay waits for that before sending the next command, so settles never overlap across
// commands whatever m says (the emulator's ControllerReconfig overlaps them). A replay through a
// controller is predicted with this model, the emulator's Controller with serial settles, so that
// the prediction times what the replay does.
func ControllerModel(m ctlmodel.Model) emulator.ReconfigModel {
	m.SerialSettle = true
	per := "per request of at most " + strconv.Itoa(m.Batch) + " changes"
	switch m.Batch {
	case 0:
		per = "per command"
	case 1:
		per = "per change"
	}
	return namedReconfig{emulator.Controller(m), "serial controller T_r=" + units.FormatSeconds(m.TR) + " " + per + ", T_w=" + units.FormatSeconds(m.TW) + " per command"}
}

// named gives a model a name of its own: a live record's models say what was measured.
type named struct {
	emulator.TransferModel
	name string
}

func (n named) Name() string { return n.name }

type namedReconfig struct {
	emulator.ReconfigModel
	name string
}

func (n namedReconfig) Name() string { return n.name }
