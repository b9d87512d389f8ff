package synth

import "math/bits"

// rng is SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and defined entirely by integer
// arithmetic, so a seed gives the same stream on every platform and Go version.
type rng struct{ s uint64 }

// newRNG derives an independent stream for (seed, ids...): each id is mixed in, so the stream
// of layer 3 does not depend on how many numbers layer 2 drew.
func newRNG(seed uint64, ids ...uint64) *rng {
	r := &rng{s: seed}
	for _, id := range ids {
		r.s = mix(r.s ^ mix(id+0x9e3779b97f4a7c15))
	}
	return r
}

func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix(r.s)
}

// uintn returns a uniform value in [0, n), n > 0, without modulo bias (Lemire's method).
func (r *rng) uintn(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// jitter returns a uniform integer in [-k, k].
func (r *rng) jitter(k uint64) int64 { return int64(r.uintn(2*k+1)) - int64(k) }

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

func div64(hi, lo, c uint64) (q, r uint64) { return bits.Div64(hi, lo, c) }
