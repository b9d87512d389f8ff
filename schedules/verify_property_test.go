package schedules_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// randomBarrierSchedule draws a random demand on ports real ports and serves it with barrier
// rounds: each round is a random partial permutation routed by the looping algorithm, and a
// demand may be split over several rounds. It is valid by construction, through code (routing)
// that the verifier does not share.
func randomBarrierSchedule(t *rapid.T) (*schedules.Schedule, *schedules.Demand) {
	ports := rapid.IntRange(2, 24).Draw(t, "ports")
	n := benes.SizeFor(ports)
	f, err := benes.New(n)
	if err != nil {
		t.Fatal(err)
	}
	d := schedules.NewDemand(ports)
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "random", N: n, Ports: ports,
		Fabric: schedules.Benes, Mode: schedules.Barrier, Params: schedules.Params{BandwidthBytesPerSecond: 1}}
	rounds := rapid.IntRange(1, 6).Draw(t, "rounds")
	for r := 0; r < rounds; r++ {
		perm := rapid.Permutation(seq(ports)).Draw(t, "perm")
		var conns []benes.Conn
		for src, dst := range perm {
			if src != dst && rapid.Bool().Draw(t, "use") {
				conns = append(conns, benes.Conn{Src: src, Dst: dst})
			}
		}
		choices, err := f.Route(conns, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range conns {
			b := rapid.Int64Range(1, 1<<40).Draw(t, "bytes")
			d.Bytes[c.Src][c.Dst] += b
			s.Circuits = append(s.Circuits, schedules.Circuit{Src: c.Src, Dst: c.Dst, Bytes: b, Group: r,
				Path: f.NewPath(c.Src, c.Dst, choices[i])})
		}
	}
	return s, d
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestVerifyPropertyRoutedRoundsAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, d := randomBarrierSchedule(t)
		if vs := schedules.Verify(s, d); len(vs) != 0 {
			t.Fatalf("valid schedule rejected: %v", schedules.ViolationsError(vs))
		}
	})
}

// Any one of these mutations makes a valid schedule invalid, and the verifier must say so.
func TestVerifyPropertyCatchesMutations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, d := randomBarrierSchedule(t)
		if len(s.Circuits) == 0 {
			return
		}
		i := rapid.IntRange(0, len(s.Circuits)-1).Draw(t, "circuit")
		c := &s.Circuits[i]
		switch m := rapid.IntRange(0, 3).Draw(t, "mutation"); m {
		case 0: // lose or invent bytes
			c.Bytes += rapid.SampledFrom([]int64{-1, 1}).Draw(t, "delta")
			if c.Bytes == 0 {
				c.Bytes = 2
			}
		case 1: // flip one out-lane: the path no longer follows the wiring to dst
			h := rapid.IntRange(0, c.Path.Len()-1).Draw(t, "hop")
			hops := c.Path.Traversals()
			hops[h].Out ^= 1
			c.Path = benes.PathOf(hops)
		case 2: // send the circuit to another receiver than its bytes are owed to
			var others []int
			for p := 0; p < s.Ports; p++ {
				if p != c.Src && p != c.Dst {
					others = append(others, p)
				}
			}
			if len(others) == 0 { // two ports: there is no other receiver
				c.Bytes++
				break
			}
			c.Dst = rapid.SampledFrom(others).Draw(t, "dst")
		case 3: // duplicate a circuit in the same round: an endpoint is used twice
			s.Circuits = append(s.Circuits, *c)
			d.Bytes[c.Src][c.Dst] += c.Bytes
		}
		if vs := schedules.Verify(s, d); len(vs) == 0 {
			t.Fatalf("mutated schedule accepted")
		}
	})
}
