package emulator_test

import (
	"cmp"
	"context"
	"math"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// partsRun is a stream run through RoundRun with each round's timeline part kept (copied).
type partsRun struct {
	s       *schedules.Schedule // the whole schedule the stream handed out
	rounds  []schedules.StreamRound
	parts   []schedules.RoundPart
	circuit [][]int // per round, its circuits' indices
}

// runParts plans d round by round and executes it with RoundRun, keeping every round and part.
func runParts(t *rapid.T, algo string, d *schedules.Demand, o schedules.Options, cfg emulator.Config) *partsRun {
	ctx := context.Background()
	sch, err := schedules.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := schedules.ScheduleRounds(ctx, sch, d, o)
	if err != nil || !ok {
		t.Fatalf("%s: ScheduleRounds: ok %v, %v", algo, ok, err)
	}
	run, err := emulator.NewRoundRun(&st.Header, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pr := &partsRun{}
	var cs []schedules.Circuit
	var rounds []schedules.Round
	for {
		r, ok, err := st.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if err := run.Round(ctx, r); err != nil {
			t.Fatal(err)
		}
		p, ok := run.Part()
		if !ok {
			continue
		}
		var idx []int
		for _, c := range r.Circuits {
			c.PlannedStart, c.PlannedEnd = nil, nil // the stream reuses its buffers
			idx = append(idx, len(cs))
			cs = append(cs, c)
		}
		r.Circuits = slices.Clone(r.Circuits)
		if r.Round != nil {
			rd := *r.Round
			rounds, r.Round = append(rounds, rd), &rd
		}
		pr.rounds, pr.circuit = append(pr.rounds, r), append(pr.circuit, idx)
		pr.parts = append(pr.parts, schedules.RoundPart{Timing: p.Timing, Ends: slices.Clone(p.Ends), SwitchChanges: slices.Clone(p.SwitchChanges)})
	}
	s := st.Header
	s.Circuits, s.Rounds = cs, rounds
	pr.s = &s
	return pr
}

// timeline is the RoundTimeline of the whole run, assembled from its parts.
func (pr *partsRun) timeline(t *rapid.T) *schedules.RoundTimeline {
	var timings []schedules.RoundTiming
	var roundOf []int32
	var ends, transmit []float64
	changes := schedules.NewRoundChanges(pr.s.N)
	for r, p := range pr.parts {
		timings = append(timings, p.Timing)
		for j := range p.Ends {
			roundOf, ends = append(roundOf, int32(r)), append(ends, p.Ends[j])
			tx := math.NaN()
			if p.Transmit != nil {
				tx = p.Transmit[j]
			}
			transmit = append(transmit, tx)
		}
		for _, c := range p.SwitchChanges {
			if err := changes.Add(r, int(c.Stage), int(c.Switch), c.To); err != nil {
				t.Fatal(err)
			}
		}
	}
	rt, err := schedules.NewRoundTimeline(timings, roundOf, ends, transmit, changes)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// streamedCheck is RoundTimelineVerifier's verdict on the run, round by round.
func (pr *partsRun) streamedCheck() []schedules.Violation {
	v := schedules.NewRoundTimelineVerifier(pr.s)
	var vs []schedules.Violation
	for r := range pr.rounds {
		vs = append(vs, v.Round(pr.rounds[r], &pr.parts[r])...)
	}
	return append(vs, v.Finish()...)
}

// corrupt plants one fault in the run's parts and names it ("" for none planted).
func (pr *partsRun) corrupt(t *rapid.T) string {
	nr := len(pr.parts)
	switch rapid.IntRange(0, 6).Draw(t, "corruption") {
	case 1: // round q starts (and all after it run) before round q−1's longest circuit ends
		q := rapid.IntRange(1, max(1, nr-1)).Draw(t, "round")
		if q >= nr || len(pr.parts[q-1].Ends) == 0 {
			return ""
		}
		p := &pr.parts[q-1]
		delta := rapid.Float64Range(0.01, 1).Draw(t, "early") * (slices.Max(p.Ends) - p.Timing.ChangeEnd)
		for r := q; r < nr; r++ {
			p := &pr.parts[r]
			p.Timing.Ready -= delta
			p.Timing.ReconfigStart -= delta
			p.Timing.ChangeStart -= delta
			p.Timing.ChangeEnd -= delta
			for j := range p.Ends {
				p.Ends[j] -= delta
			}
		}
		return "early round"
	case 2, 3: // a switch change goes to the wrong state, or is missing
		var at [][2]int
		for r, p := range pr.parts {
			for k := range p.SwitchChanges {
				at = append(at, [2]int{r, k})
			}
		}
		if len(at) == 0 {
			return ""
		}
		x := rapid.SampledFrom(at).Draw(t, "change")
		p := &pr.parts[x[0]]
		if rapid.Bool().Draw(t, "drop") {
			p.SwitchChanges = slices.Delete(p.SwitchChanges, x[1], x[1]+1)
			return "change dropped"
		}
		p.SwitchChanges[x[1]].To ^= 1
		return "wrong state"
	case 4: // a circuit transmits from its round's reconfiguration start
		r, j, ok := pr.drawCircuit(t)
		if !ok {
			return ""
		}
		p := &pr.parts[r]
		p.Transmit = make([]float64, len(p.Ends))
		for k := range p.Transmit {
			p.Transmit[k] = math.NaN()
		}
		p.Transmit[j] = p.Timing.ChangeStart
		return "transmit before reconfiguration"
	case 5: // a circuit ends late, into the rounds after it
		r, j, ok := pr.drawCircuit(t)
		if !ok {
			return ""
		}
		last := pr.parts[nr-1]
		pr.parts[r].Ends[j] += rapid.Float64Range(0, 1.5).Draw(t, "late") * (slices.Max(append(last.Ends, last.Timing.ChangeEnd)) - pr.parts[r].Timing.Ready)
		return "late end"
	case 6: // a circuit ends before it starts
		r, j, ok := pr.drawCircuit(t)
		if !ok {
			return ""
		}
		pr.parts[r].Ends[j] = pr.parts[r].Timing.ChangeEnd - 1
		return "end before start"
	}
	return ""
}

func (pr *partsRun) drawCircuit(t *rapid.T) (r, j int, ok bool) {
	var at [][2]int
	for r, p := range pr.parts {
		for j := range p.Ends {
			at = append(at, [2]int{r, j})
		}
	}
	if len(at) == 0 {
		return 0, 0, false
	}
	x := rapid.SampledFrom(at).Draw(t, "circuit")
	return x[0], x[1], true
}

func sortedViolations(vs []schedules.Violation) []schedules.Violation {
	vs = slices.Clone(vs)
	slices.SortFunc(vs, func(a, b schedules.Violation) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Circuit, b.Circuit), cmp.Compare(a.Message, b.Message))
	})
	return vs
}

// TestRoundTimelineVerifierFindsWhatVerifyFinds: every barrier scheduler's stream executed by
// RoundRun gives parts that assemble into Run's timeline of the whole schedule; and with a fault
// planted in them (a round started before the previous one's longest circuit ended, a switch
// change to the wrong state or dropped, a circuit transmitting from its round's reconfiguration
// start, a circuit ending late or before it starts) RoundTimelineVerifier round by round finds
// exactly the violations VerifyRoundTimeline finds on the assembled timeline: none without a
// fault, the same ones with.
func TestRoundTimelineVerifierFindsWhatVerifyFinds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, algo, o, cfg := drawRoundCase(t)
		pr := runParts(t, algo, d, o, cfg)
		_, tl, err := emulator.Run(context.Background(), pr.s, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := pr.timeline(t).Expand()
		if !reflect.DeepEqual(got.Circuits, tl.Circuits) && len(tl.Circuits)+len(got.Circuits) > 0 {
			t.Fatalf("RoundRun's parts give circuits\n%v\nRun's timeline has\n%v", got.Circuits, tl.Circuits)
		}
		byRound := func(a, b schedules.SwitchChange) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Switch, b.Switch))
		}
		slices.SortStableFunc(got.SwitchChanges, byRound)
		slices.SortStableFunc(tl.SwitchChanges, byRound)
		if !slices.Equal(got.SwitchChanges, tl.SwitchChanges) {
			t.Fatalf("RoundRun's parts give switch changes\n%v\nRun's timeline has\n%v", got.SwitchChanges, tl.SwitchChanges)
		}
		fault := pr.corrupt(t)
		want := sortedViolations(schedules.VerifyRoundTimeline(pr.s, pr.timeline(t)))
		if fault == "" && len(want) > 0 {
			t.Fatalf("no fault planted, VerifyRoundTimeline finds %v", want)
		}
		if have := sortedViolations(pr.streamedCheck()); !reflect.DeepEqual(have, want) && len(have)+len(want) > 0 {
			t.Fatalf("%s: round by round\n%v\nwhole\n%v", fault, have, want)
		}
	})
}
