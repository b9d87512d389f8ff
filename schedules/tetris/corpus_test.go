package tetris

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// corpusFull adds the n = 256 and n = 512 cases (minutes) to TestCorpus.
var corpusFull = flag.Bool("corpus.full", false, "TestCorpus: also plan the n = 256 and 512 cases (slow)")

const (
	corpusDir     = "testdata/corpus"
	corpusDigests = corpusDir + "/digests.txt"
)

// corpusCase is one schedule of the golden corpus: a seeded demand, an algorithm and its options.
type corpusCase struct {
	name string
	n    int
	kind string // dense, sparse or uniform
	algo string // tetris or snb
	o    schedules.Options
	// full: the whole schedule file is kept (gzipped), not only its digest, so that a difference
	// can be read.
	full bool
}

func (c corpusCase) demand() *schedules.Demand {
	switch c.kind {
	case "dense":
		return moetest.Demand(uint64(c.n), c.n, 1, 0)
	case "sparse":
		return moetest.Demand(uint64(c.n)+1000, c.n, 1, 0.7)
	}
	// Every pair the same size: nothing but the tie-breaking rules decide.
	d := schedules.NewDemand(c.n)
	for i := range c.n {
		for j := range c.n {
			if i != j {
				d.Bytes[i][j] = 4 * moetest.TokenBytes
			}
		}
	}
	return d
}

// corpusCases is the golden corpus: dense, sparse and uniform demands, n = 8..512 (12 is padded to
// 16), Tetris with each ablation and all three, and the crossbar reference, at α_r = 0, 10 ns,
// 10 µs and 1 ms. The default test plans the cases up to n = 128 (about a second); -corpus.full
// adds n = 256 and 512.
func corpusCases() []corpusCase {
	type variant struct {
		name  string
		algo  string
		o     schedules.Options
		alpha []float64
	}
	every := []float64{0, 10e-9, 10e-6, 1e-3}
	some := []float64{0, 10e-6}
	variants := []variant{
		{"tetris", "tetris", schedules.Options{}, every},
		{"snb", "snb", schedules.Options{}, every},
		{"no-partial", "tetris", schedules.Options{NoPartial: true}, some},
		{"naive-routing", "tetris", schedules.Options{NaiveRouting: true}, some},
		{"no-degree-coverage", "tetris", schedules.Options{NoDegreeCoverage: true}, some},
		{"all-ablations", "tetris", schedules.Options{NoPartial: true, NaiveRouting: true, NoDegreeCoverage: true}, []float64{10e-6}},
		{"snb-no-partial", "snb", schedules.Options{NoPartial: true}, []float64{10e-6}},
	}
	alphaName := map[float64]string{0: "0", 10e-9: "10ns", 10e-6: "10us", 1e-3: "1ms"}
	var cs []corpusCase
	add := func(n int, kind string, v variant, alpha float64) {
		o := v.o
		o.Bandwidth, o.Reconfig = 100e9, alpha
		cs = append(cs, corpusCase{
			name: fmt.Sprintf("n%d-%s-%s-a%s", n, kind, v.name, alphaName[alpha]),
			n:    n, kind: kind, algo: v.algo, o: o, full: n == 8,
		})
	}
	for _, n := range []int{8, 12, 16, 32, 64, 256} {
		kinds := []string{"dense", "sparse"}
		if n <= 16 {
			kinds = append(kinds, "uniform")
		}
		for _, kind := range kinds {
			for _, v := range variants {
				for _, a := range v.alpha {
					add(n, kind, v, a)
				}
			}
		}
	}
	// n = 128 and 512: the main variants only.
	for _, n := range []int{128, 512} {
		for _, kind := range []string{"dense", "sparse"} {
			for _, v := range variants {
				switch {
				case v.name == "tetris" && n == 512:
					for _, a := range []float64{0, 10e-6, 1e-3} {
						add(n, kind, v, a)
					}
				case v.name == "tetris" || v.name == "snb" || v.name == "naive-routing" || n == 512 && v.name != "all-ablations" && v.name != "snb-no-partial":
					add(n, kind, v, 10e-6)
				}
			}
		}
	}
	return cs
}

func (c corpusCase) slow() bool { return c.n >= 256 }

// encodeSchedule is the schedule file exactly as the CLI writes it (Schedule.WriteJSON). The
// digests were recorded from json.MarshalIndent and a newline, the CLI's writer before
// WriteJSON, so the corpus also proves the two byte-identical.
func encodeSchedule(s *schedules.Schedule) ([]byte, error) {
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (c corpusCase) plan() ([]byte, error) {
	sch, err := schedules.Lookup(c.algo)
	if err != nil {
		return nil, err
	}
	s, err := sch.Schedule(context.Background(), c.demand(), c.o)
	if err != nil {
		return nil, err
	}
	return encodeSchedule(s)
}

func digestOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// readDigests reads "sha256  name" lines, the format sha256sum writes.
func readDigests(path string) (map[string]string, error) {
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		digest, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(digest) != 64 {
			return nil, fmt.Errorf("%s:%d: want \"sha256  name\", got %q", path, line, sc.Text())
		}
		m[name] = digest
	}
	return m, sc.Err()
}

func writeDigests(path string, m map[string]string) error {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, name := range names {
		fmt.Fprintf(&b, "%s  %s\n", m[name], name)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(z)
}

func writeGzip(path string, b []byte) error {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := z.Write(b); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// firstDifference names the first line where got and want differ, to make a failure readable.
func firstDifference(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(g), len(w)) {
		if !bytes.Equal(g[i], w[i]) {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// TestCorpus plans every case of the golden corpus and compares the schedule file byte for byte
// with the one recorded (its SHA-256 in testdata/corpus/digests.txt, and for n = 8 the whole file),
// so that a change meant only to make Tetris faster or smaller cannot change a schedule. -update
// records the current schedules; -short skips n ≥ 256 even with -corpus.full.
func TestCorpus(t *testing.T) {
	want, err := readDigests(corpusDigests)
	if err != nil && !(goldenfile.Update() && os.IsNotExist(err)) {
		t.Fatalf("%v (go test -update -corpus.full creates it)", err)
	}
	got := map[string]string{}
	ran := 0
	for _, c := range corpusCases() {
		if c.slow() && (!*corpusFull || testing.Short()) {
			got[c.name] = want[c.name] // kept as recorded
			continue
		}
		ran++
		t.Run(c.name, func(t *testing.T) {
			b, err := c.plan()
			if err != nil {
				t.Fatal(err)
			}
			got[c.name] = digestOf(b)
			full := filepath.Join(corpusDir, c.name+".json.gz")
			if c.full && goldenfile.Update() {
				if old, err := readGzip(full); err != nil || !bytes.Equal(old, b) {
					if err := writeGzip(full, b); err != nil {
						t.Fatal(err)
					}
				}
			}
			if goldenfile.Update() {
				return
			}
			if w, ok := want[c.name]; !ok {
				t.Fatalf("%s has no digest in %s (go test -update records it)", c.name, corpusDigests)
			} else if got[c.name] != w {
				t.Errorf("schedule %s differs from the corpus: sha256 %s, recorded %s", c.name, got[c.name], w)
			}
			if c.full {
				w, err := readGzip(full)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, w) {
					t.Errorf("schedule %s differs from %s: %s", c.name, full, firstDifference(b, w))
				}
			}
		})
	}
	if goldenfile.Update() {
		for name, d := range got {
			if d == "" {
				delete(got, name)
			}
		}
		if err := writeDigests(corpusDigests, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d digests (%d planned) in %s", len(got), ran, corpusDigests)
		return
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s lists %s, which is no longer a corpus case (go test -update drops it)", corpusDigests, name)
		}
	}
}
