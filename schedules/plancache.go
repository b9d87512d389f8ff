package schedules

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// PlanCache keeps, across calls, the parts of schedulers' plans that depend on the demand alone:
// a Birkhoff–von Neumann decomposition, say, does not depend on the bandwidth, α_r or fabric that
// the schedule's times and paths are then worked out for. A sweep plans every matrix at every
// (bandwidth, α_r) cell of its grid; given one cache in Options, each decomposition is computed
// once per matrix instead of once per cell. Schedules are the same with or without it (what is
// kept is a pure function of the key). Safe for concurrent use; the zero value is ready.
// Nothing is evicted: give a cache the lifetime of one sweep.
type PlanCache struct {
	mu sync.Mutex
	m  map[PlanKey]any
}

// PlanKey names a cached plan: the scheduler and a SHA-256 of the matrix it planned.
type PlanKey struct {
	Algorithm string
	Matrix    [sha256.Size]byte
}

// NewPlanKey keys algorithm's plan of the square matrix m (the demand as the fabric sees it).
func NewPlanKey(algorithm string, m [][]int64) PlanKey {
	h := sha256.New()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(len(m)))
	h.Write(buf[:])
	for _, row := range m {
		for _, v := range row {
			binary.LittleEndian.PutUint64(buf[:], uint64(v))
			h.Write(buf[:])
		}
	}
	k := PlanKey{Algorithm: algorithm}
	h.Sum(k.Matrix[:0])
	return k
}

// Load returns the plan kept under k, if any. The caller must not modify it.
func (c *PlanCache) Load(k PlanKey) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// Store keeps v under k; v must not be modified afterwards.
func (c *PlanCache) Store(k PlanKey, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[PlanKey]any{}
	}
	c.m[k] = v
}
