package schedules

import (
	"fmt"
	"math"
)

// Demand is an n×n matrix of bytes: Bytes[i][j] is what GPU (port) i sends to GPU j.
//
// CountDiagonal says whether local traffic (i to i) crosses the fabric. On a real GPU server it
// never does, so by default the diagonal is ignored by every load, degree, bound and scheduler.
type Demand struct {
	Bytes         [][]int64
	CountDiagonal bool
}

// NewDemand returns an all-zero n×n demand.
func NewDemand(n int) *Demand { return demandOver(make([]int64, n*n), n) }

// demandOver makes a demand whose rows are the n×n cells, row-major, without copying them.
func demandOver(cells []int64, n int) *Demand {
	b := make([][]int64, n)
	for i := range b {
		b[i] = cells[i*n : (i+1)*n : (i+1)*n]
	}
	return &Demand{Bytes: b}
}

// DemandFromRows copies rows into a Demand after checking that they are square, non-negative and
// within the byte limits (CheckLimits: every load at most MaxBytes).
func DemandFromRows(rows [][]int64) (*Demand, error) {
	n := len(rows)
	if n == 0 {
		return nil, fmt.Errorf("demand matrix is empty (n = 0)")
	}
	d := NewDemand(n)
	for i, r := range rows {
		if len(r) != n {
			return nil, fmt.Errorf("demand matrix is not square: row %d has %d entries, want %d", i, len(r), n)
		}
		for j, v := range r {
			if v < 0 {
				return nil, fmt.Errorf("demand matrix entry [%d][%d] = %d is negative", i, j, v)
			}
			d.Bytes[i][j] = v
		}
	}
	if err := d.CheckLimits(); err != nil {
		return nil, fmt.Errorf("demand matrix %w", err)
	}
	return d, nil
}

// N is the number of ports (GPUs).
func (d *Demand) N() int { return len(d.Bytes) }

// At is the demand from i to j as the fabric sees it: 0 on the diagonal unless CountDiagonal.
func (d *Demand) At(i, j int) int64 {
	if i == j && !d.CountDiagonal {
		return 0
	}
	return d.Bytes[i][j]
}

// Clone returns a deep copy.
func (d *Demand) Clone() *Demand {
	c := NewDemand(d.N())
	for i := range d.Bytes {
		copy(c.Bytes[i], d.Bytes[i])
	}
	c.CountDiagonal = d.CountDiagonal
	return c
}

// Pair is one nonzero entry of a demand.
type Pair struct {
	Src, Dst int
	Bytes    int64
}

// Pairs lists the nonzero entries the fabric must carry, in (src, dst) order.
func (d *Demand) Pairs() []Pair {
	var ps []Pair
	for i := range d.Bytes {
		for j := range d.Bytes[i] {
			if v := d.At(i, j); v > 0 {
				ps = append(ps, Pair{i, j, v})
			}
		}
	}
	return ps
}

// RowLoad is the bytes transmitter i must send.
func (d *Demand) RowLoad(i int) int64 {
	var s int64
	for j := range d.Bytes[i] {
		s += d.At(i, j)
	}
	return s
}

// ColLoad is the bytes receiver j must take in.
func (d *Demand) ColLoad(j int) int64 {
	var s int64
	for i := range d.Bytes {
		s += d.At(i, j)
	}
	return s
}

// Total is the bytes the fabric must carry.
func (d *Demand) Total() int64 {
	var s int64
	for i := range d.Bytes {
		s += d.RowLoad(i)
	}
	return s
}

// RowDegree is the number of distinct receivers transmitter i sends to.
func (d *Demand) RowDegree(i int) int {
	c := 0
	for j := range d.Bytes[i] {
		if d.At(i, j) > 0 {
			c++
		}
	}
	return c
}

// ColDegree is the number of distinct transmitters receiver j hears from.
func (d *Demand) ColDegree(j int) int {
	c := 0
	for i := range d.Bytes {
		if d.At(i, j) > 0 {
			c++
		}
	}
	return c
}

// MaxDegree is Δ, the largest number of distinct partners of any endpoint (transmit and receive
// sides counted as distinct endpoints). Any schedule that never splits a demand across two
// simultaneous circuits needs at least Δ matchings.
func (d *Demand) MaxDegree() int {
	m := 0
	for i := range d.Bytes {
		m = max(m, d.RowDegree(i), d.ColDegree(i))
	}
	return m
}

// Endpoint names one side of a port: a transmitter (Tx) or a receiver (Rx).
type Endpoint struct {
	Port int
	Rx   bool
}

func (e Endpoint) String() string {
	if e.Rx {
		return fmt.Sprintf("Rx%d", e.Port)
	}
	return fmt.Sprintf("Tx%d", e.Port)
}

// Stats summarises a demand's skew.
type Stats struct {
	N               int
	Total           int64
	MaxRowLoad      int64
	MaxColLoad      int64
	MeanLoad        float64 // mean over all 2n endpoint loads... see Skew
	Skew            float64 // max endpoint load / mean transmitter load (1 for a uniform matrix)
	MaxDegree       int
	Bottlenecks     []Endpoint // endpoints whose load equals max(MaxRowLoad, MaxColLoad)
	NonzeroPairs    int
	ReceiverSkew    float64 // max receiver load / mean receiver load
	TransmitterSkew float64 // max transmitter load / mean transmitter load
}

// Statistics computes Stats.
func (d *Demand) Statistics() Stats {
	n := d.N()
	s := Stats{N: n, MaxDegree: d.MaxDegree()}
	rows := make([]int64, n)
	cols := make([]int64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := d.At(i, j)
			if v > 0 {
				s.NonzeroPairs++
			}
			rows[i] += v
			cols[j] += v
		}
	}
	for i := 0; i < n; i++ {
		s.Total += rows[i]
		s.MaxRowLoad = max(s.MaxRowLoad, rows[i])
		s.MaxColLoad = max(s.MaxColLoad, cols[i])
	}
	peak := max(s.MaxRowLoad, s.MaxColLoad)
	if n > 0 {
		s.MeanLoad = float64(s.Total) / float64(n)
	}
	if s.MeanLoad > 0 {
		s.Skew = float64(peak) / s.MeanLoad
		s.ReceiverSkew = float64(s.MaxColLoad) / s.MeanLoad
		s.TransmitterSkew = float64(s.MaxRowLoad) / s.MeanLoad
	} else {
		s.Skew, s.ReceiverSkew, s.TransmitterSkew = math.NaN(), math.NaN(), math.NaN()
	}
	if peak > 0 {
		for i := 0; i < n; i++ {
			if rows[i] == peak {
				s.Bottlenecks = append(s.Bottlenecks, Endpoint{Port: i})
			}
		}
		for j := 0; j < n; j++ {
			if cols[j] == peak {
				s.Bottlenecks = append(s.Bottlenecks, Endpoint{Port: j, Rx: true})
			}
		}
	}
	return s
}
