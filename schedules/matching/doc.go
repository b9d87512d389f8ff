// Package matching holds the bipartite matching algorithms the circuit schedulers share:
// Hopcroft–Karp maximum-cardinality matching (with a warm start, so that a scheduler that removes
// a few edges per step re-augments only what it lost), perfect matchings on the positive support of
// a square matrix, the bottleneck (max-min) perfect matching, and the maximum-weight assignment
// (Hungarian method with potentials, O(n³)) for int64 or float64 weights.
//
// Left vertices are transmitters (rows), right vertices receivers (columns). A matching is given as
// mate, a slice indexed by left vertex holding its right partner or −1; a perfect matching of a
// square matrix is a permutation perm with perm[i] = j.
package matching
