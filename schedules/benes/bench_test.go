package benes

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchSizes = []int{8, 16, 32, 64, 128, 256}

// BenchmarkRoute routes one full random permutation with plain looping.
func BenchmarkRoute(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f, _ := New(n)
			rng := rand.New(rand.NewPCG(uint64(n), 2))
			conns := make([]Conn, n)
			for i, d := range rng.Perm(n) {
				conns[i] = Conn{i, d}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Route(conns, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQuery runs one Query against a plan holding three rounds of committed circuits, each a
// random full permutation routed by Query itself at its earliest start.
func BenchmarkQuery(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f, _ := New(n)
			p := NewPlan(f, 1)
			rng := rand.New(rand.NewPCG(uint64(n), 3))
			for range 3 {
				for src, dst := range rng.Perm(n) {
					c, start, _ := p.Query(src, dst)
					p.Commit(src, dst, c, start, start+1+rng.Float64()*10)
				}
			}
			src, dst := rng.IntN(n), rng.IntN(n)
			b.ReportAllocs()
			for b.Loop() {
				p.Query(src, dst)
			}
		})
	}
}

// BenchmarkQueryUniform queries a plan in which every switch was last used until the same time, so
// that many paths tie and the search prunes little: closer to Query's worst case than
// BenchmarkQuery.
func BenchmarkQueryUniform(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f, _ := New(n)
			p := NewPlan(f, 1)
			for src := range n {
				p.Commit(src, src, 0, 0, 5)
			}
			b.ReportAllocs()
			for b.Loop() {
				p.Query(1, n-2)
			}
		})
	}
}

// BenchmarkPathHops reads every hop of 1024 paths of a 128-port fabric: compact paths through
// All and through AppendTo into one buffer, against the []Traversal slices they replace.
func BenchmarkPathHops(b *testing.B) {
	f, _ := New(128)
	rng := rand.New(rand.NewPCG(1, 2))
	compact := make([]Path, 1024)
	slices := make([][]Traversal, 1024)
	for i := range compact {
		src, dst, c := rng.IntN(128), rng.IntN(128), rng.Uint32()
		compact[i], slices[i] = f.NewPath(src, dst, c), f.PathFrom(src, dst, c)
	}
	sum := 0
	b.Run("compact", func(b *testing.B) {
		for b.Loop() {
			for _, p := range compact {
				for _, t := range p.All() {
					sum += t.Switch + t.Out
				}
			}
		}
	})
	b.Run("compact-buffer", func(b *testing.B) {
		var buf [MaxStages]Traversal
		for b.Loop() {
			for _, p := range compact {
				for _, t := range p.AppendTo(buf[:0]) {
					sum += t.Switch + t.Out
				}
			}
		}
	})
	b.Run("slice", func(b *testing.B) {
		for b.Loop() {
			for _, p := range slices {
				for _, t := range p {
					sum += t.Switch + t.Out
				}
			}
		}
	})
	if sum == 0 {
		b.Fatal("nothing read")
	}
}
