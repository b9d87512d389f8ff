package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		bad  string
	}{
		{in: "0/1", want: Shard{0, 1}},
		{in: "3/4", want: Shard{3, 4}},
		{in: " 2 / 5 ", want: Shard{2, 5}},
		{in: "4/4", bad: "0 ≤ K < N"},
		{in: "-1/4", bad: "0 ≤ K < N"},
		{in: "0/0", bad: "N ≥ 1"},
		{in: "1", bad: "want K/N"},
		{in: "a/2", bad: "whole numbers"},
	} {
		got, err := ParseShard(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), strings.TrimSpace(tc.in)[:1]) {
				t.Errorf("ParseShard(%q) = %v, %v; want an error mentioning %q", tc.in, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// fataler is what the helpers need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// roundTrip writes sf as the CLI does and reads it back.
func roundTrip(t fataler, dir string, sf *ShardFile) *ShardFile {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := safefile.WriteJSON(filepath.Join(dir, ShardFileName), sf); err != nil {
		t.Fatal(err)
	}
	read := ReadShard
	if sf.FirstUnit+len(sf.Results) < sf.Units { // an interrupted sweep's partial file
		read = ReadPartial
	}
	got, err := read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func csvOf(t fataler, r *Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestShardsMergeToRun: for random traces, grids and shard counts (more shards than units
// included), every shard through its file, merged in a random order, gives exactly Run's result
// and CSV, and the merged manifest is the unsharded one plus the shard list.
func TestShardsMergeToRun(t *testing.T) {
	algos := []string{parallelAlgo, serialAlgo}
	if real := realAlgorithms(); len(real) > 0 {
		algos = append(algos, real[:min(2, len(real))]...)
	}
	inputs := []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "ab"}}
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(t *rapid.T) {
		runs++
		var ds []*schedules.Demand
		for k := range rapid.IntRange(1, 4).Draw(t, "matrices") {
			ds = append(ds, genDemand(t, string(rune('A'+k))))
		}
		bws := rapid.SliceOfNDistinct(rapid.SampledFrom([]float64{12.5e9, 50e9, 100e9}), 1, 2, rapid.ID).Draw(t, "bandwidths")
		rcs := rapid.SliceOfNDistinct(rapid.SampledFrom([]float64{0, 10e-9, 1e-6, 10e-3}), 1, 3, rapid.ID).Draw(t, "reconfigs")
		cfg := Config{Algorithms: algos, Reference: algos[0], Bandwidths: bws, Reconfigs: rcs, Jobs: rapid.IntRange(1, 2).Draw(t, "jobs")}
		if slices.Contains(algos, "tetris") && rapid.Bool().Draw(t, "wear axis") {
			cfg.WearWeights = []float64{0, 2}
		}
		want, err := Run(context.Background(), ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := rapid.IntRange(1, len(ds)*len(bws)*len(rcs)+2).Draw(t, "shards")
		var shards []*ShardFile
		for _, k := range rapid.Permutation(seq(n)).Draw(t, "order") {
			sf, err := RunShard(context.Background(), ds, cfg, Shard{k, n}, "tool", inputs)
			if err != nil {
				t.Fatal(err)
			}
			shards = append(shards, roundTrip(t, filepath.Join(dir, "r", string(rune('a'+runs%26)), string(rune('a'+k))), sf))
		}
		got, m, err := Merge(shards)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("merged %d shards differ from the unsharded run", n)
		}
		if !bytes.Equal(csvOf(t, got), csvOf(t, want)) {
			t.Fatal("merged CSV differs")
		}
		wm := NewManifest(want, cfg, "tool", inputs)
		if len(m.Shards) != n {
			t.Fatalf("merged manifest lists %d shards, want %d", len(m.Shards), n)
		}
		for k, s := range m.Shards {
			if s.Shard != k || s.Shards != n || len(s.SHA256) != 64 || !reflect.DeepEqual(s.Inputs, inputs) {
				t.Fatalf("shard entry %d: %+v", k, s)
			}
		}
		m.Shards = nil
		if !reflect.DeepEqual(m, wm) {
			t.Fatalf("merged manifest %+v, want %+v", m, wm)
		}
	})
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestMergeRefuses: shards of different sweeps, a repeated or missing shard, or a tampered
// file are refused with a message that names what differs.
func TestMergeRefuses(t *testing.T) {
	ds := handDemands(t)
	cfg := handConfig()
	inputs := []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "ab"}}
	dir := t.TempDir()
	shard := func(name string, ds []*schedules.Demand, cfg Config, k, n int, in []provenance.Input) *ShardFile {
		sf, err := RunShard(context.Background(), ds, cfg, Shard{k, n}, "tool", in)
		if err != nil {
			t.Fatal(err)
		}
		return roundTrip(t, filepath.Join(dir, name), sf)
	}
	s0, s1 := shard("s0", ds, cfg, 0, 2, inputs), shard("s1", ds, cfg, 1, 2, inputs)
	// The same input found elsewhere merges: only hashes must agree.
	moved := shard("moved", ds, cfg, 1, 2, []provenance.Input{{Role: "demand", Path: "/elsewhere/t.json", SHA256: "ab"}})
	if _, m, err := Merge([]*ShardFile{moved, s0}); err != nil {
		t.Fatalf("shards with the same input at two paths: %v", err)
	} else if m.Inputs[0].Path != "t.json" || m.Shards[1].Inputs[0].Path != "/elsewhere/t.json" {
		t.Errorf("merged inputs %+v, shards %+v", m.Inputs, m.Shards)
	}
	otherGrid := cfg
	otherGrid.Reconfigs = append([]float64{}, cfg.Reconfigs...)
	otherGrid.Reconfigs[1] *= 2
	otherAlgo := cfg
	otherAlgo.Algorithms = []string{cfg.Algorithms[1], cfg.Algorithms[0]}
	otherDemand := []*schedules.Demand{ds[0].Clone(), ds[1], ds[2]}
	otherDemand[0].Bytes[0][1]++
	tampered := *s1
	tampered.Results = s1.Results[1:]
	for _, tc := range []struct {
		name   string
		shards []*ShardFile
		want   string
	}{
		{"other input", []*ShardFile{s0, shard("in", ds, cfg, 1, 2, []provenance.Input{{Role: "demand", Path: "t.json", SHA256: "cd"}})}, `"sha256":"cd"`},
		{"other grid", []*ShardFile{s0, shard("grid", ds, otherGrid, 1, 2, inputs)}, `reconfigs_seconds: [0,1] vs [0,2]`},
		{"other algorithms", []*ShardFile{s0, shard("algo", ds, otherAlgo, 1, 2, inputs)}, "different sweeps"},
		{"other matrices", []*ShardFile{s0, shard("dem", otherDemand, cfg, 1, 2, inputs)}, "different matrices"},
		{"other count", []*ShardFile{s0, shard("n3", ds, cfg, 1, 3, inputs)}, "different shard counts"},
		{"repeated", []*ShardFile{s0, s0}, "are both shard 0/2"},
		{"missing", []*ShardFile{s1}, "shard 0/2 is missing"},
		{"tampered", []*ShardFile{s0, &tampered}, "but shard 1/2 is units"},
		{"none", nil, "no shards"},
	} {
		_, _, err := Merge(tc.shards)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// A file with an unknown field or version is refused when read.
	b, _ := json.Marshal(map[string]any{"version": 2, "manifest": map[string]any{}})
	path := filepath.Join(dir, "v2.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadShard(path); err == nil || !strings.Contains(err.Error(), "field version: 2") {
		t.Errorf("version 2 shard: %v", err)
	}
}
