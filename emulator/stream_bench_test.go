package emulator

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// benchRun is a barrier run on 64 ports (64 rounds of random permutations, 4096 circuits, each
// round reconfiguring much of the fabric), the shape of a Birkhoff–von Neumann run, as a record.
func benchRun(b *testing.B) (*schedules.Schedule, *RunRecord) {
	s := randomSchedule(rand.New(rand.NewPCG(1, 64)), 64, 64, schedules.Benes, schedules.Barrier, 1)
	res, tl, err := Run(context.Background(), s, nil, Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6)})
	if err != nil {
		b.Fatal(err)
	}
	return s, &RunRecord{Version: RunRecordVersion, Source: SourceEmulator, Algorithm: s.Algorithm,
		Matrix: MatrixRef{Index: 0}, Result: res, Timeline: tl}
}

// BenchmarkRunRecordWrite: the record's file text, streamed (new) and marshalled whole as the old
// Write did (old), to io.Discard; the bytes are the same (TestPropertyRunRecordMatchesMarshalIndent).
func BenchmarkRunRecordWrite(b *testing.B) {
	_, rec := benchRun(b)
	b.Run("old", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t, err := json.MarshalIndent(rec, "", " ")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Discard.Write(append(t, '\n')); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := rec.WriteJSON(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkChromeTrace: the Chrome trace of the same run, streamed (new) and built whole (old).
func BenchmarkChromeTrace(b *testing.B) {
	s, rec := benchRun(b)
	for _, c := range []struct {
		name  string
		write func(io.Writer, *schedules.Schedule, *schedules.Timeline) error
	}{{"old", oracleWriteChromeTrace}, {"new", WriteChromeTrace}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.write(io.Discard, s, rec.Timeline); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
