package holo

import (
	"context"
	"fmt"
	"math"
)

// Point is one algorithm at one set of parameters: simulated against closed form.
type Point struct {
	Algorithm         string  `json:"algorithm"`
	Nodes             int     `json:"nodes"`
	SimulatedSeconds  float64 `json:"simulated_seconds"`
	ClosedFormSeconds float64 `json:"closed_form_seconds"`
	// ModelFormSeconds is this model's exact closed form where it has one (see ModelForm).
	ModelFormSeconds *float64 `json:"model_form_seconds,omitempty"`
	ConfigChanges    int      `json:"config_changes"`
	AppSends         int      `json:"app_sends"`
	Forwards         int      `json:"forwards"`
	Stages           int      `json:"stages"`
	K                int      `json:"k,omitempty"`
	// HeaderCostSeconds is H·T_d, the per-stage header cost read into the tree forms' T_d.
	HeaderCostSeconds float64 `json:"header_cost_seconds"`
	// TcHalf* are T_c^0.5 (§3.3), when asked for: simulated, and from the closed form where it has
	// one.
	TcHalfSimulatedSeconds *float64 `json:"tc_half_simulated_seconds,omitempty"`
	TcHalfClosedSeconds    *float64 `json:"tc_half_closed_form_seconds,omitempty"`
	Note                   string   `json:"note"`
}

// Evaluate simulates algorithm for p and sets the result beside its closed forms; with tcHalf it
// also finds T_c^0.5.
func Evaluate(ctx context.Context, algorithm string, p Params, tcHalf bool) (Point, error) {
	plan, err := NewPlan(algorithm, p)
	if err != nil {
		return Point{}, err
	}
	r, err := Run(ctx, p, plan)
	if err != nil {
		return Point{}, err
	}
	cf, err := ClosedForm(algorithm, p)
	if err != nil {
		return Point{}, err
	}
	pt := Point{
		Algorithm: algorithm, Nodes: p.Nodes, SimulatedSeconds: r.Seconds, ClosedFormSeconds: cf,
		ConfigChanges: r.ConfigChanges, AppSends: r.AppSends, Forwards: r.Forwards, Stages: r.Stages,
		K: r.K, HeaderCostSeconds: p.HeaderCost(), Note: note(algorithm, p),
	}
	if m, ok := ModelForm(algorithm, p); ok {
		pt.ModelFormSeconds = &m
	}
	if tcHalf {
		if err := ctx.Err(); err != nil {
			return Point{}, err
		}
		ts, err := TcHalfSimulated(ctx, algorithm, p)
		if err != nil {
			return Point{}, err
		}
		pt.TcHalfSimulatedSeconds = &ts
		if tc := TcHalfClosed(algorithm, p); !math.IsNaN(tc) {
			pt.TcHalfClosedSeconds = &tc
		}
	}
	return pt, nil
}

// note says how the simulated time relates to the closed form for algorithm.
func note(algorithm string, p Params) string {
	switch algorithm {
	case Naive:
		return "exact: one CSet and one stack send per node, reception overlapping the send"
	case Ring:
		if p.TR > p.S()*p.TF {
			return "the paper's T_c: here the N−1 requests queue at the control station (T_r > S·T_f), so FUs wait for their links"
		}
		return "exact: all CSets at once, N−1 link crossings, stack at both ends"
	case Tree:
		if p.TR != 0 {
			return "stage s queues 2^s requests at the control station (T_r > 0), which the paper's T_c leaves out"
		}
		return "model = paper − H·T_d: stage 1's sender already holds the message and lifts no header; at N not a power of two the model takes ⌈lg N⌉ stages"
	case TreeRing:
		return fmt.Sprintf("approximation: the paper's −3.3 is lg(S·T_f/(T_d+T_c)) for T_c ≈ 10·S·T_f (here %.2f with k = %d); it drops the +1 stage of lg(N/k)+1 and the ring finish of the last fragments; the end node's header lift overlaps its forward here",
			math.Log2(p.S()*p.TF/(p.HeaderCost()+p.TC())), p.K())
	case TreeRingAlt:
		stages := 0
		for AlternatingReached(p.K(), stages) < p.Nodes {
			stages++
		}
		return fmt.Sprintf("the paper bounds the stages by 2·log_k N = %.2f (k = %d) and gives no exact count; its recurrences e(i), o(i) reach N in %d stages",
			2*math.Log2(float64(p.Nodes))/math.Log2(float64(p.K())), p.K(), stages)
	}
	return ""
}

// Overtake is where another algorithm overtakes the ring over a range of N.
type Overtake struct {
	// First is the first N of the range at which the other algorithm is faster than the ring
	// (0: never in the range).
	First int `json:"first"`
	// Ring lists the runs [a, b] of N at which the ring is at least as fast, in order (the tree's
	// stage count steps at powers of two, so there can be several).
	Ring [][2]int `json:"ring_at_least_as_fast"`
}

func (o *Overtake) add(n int, ring, other float64) {
	if other < ring {
		if o.First == 0 {
			o.First = n
		}
		return
	}
	if k := len(o.Ring); k > 0 && o.Ring[k-1][1] == n-1 {
		o.Ring[k-1][1] = n
		return
	}
	o.Ring = append(o.Ring, [2]int{n, n})
}

// Crossover compares the ring with one tree algorithm over a range of N (Er-El and Feitelson §3.2).
type Crossover struct {
	Versus string `json:"versus"`
	// Paper is the paper's simplified inequality for the ring to win, and PaperBelow the N below
	// which it holds (empty and 0: the paper gives none).
	Paper      string   `json:"paper_inequality,omitempty"`
	PaperBelow int      `json:"paper_below,omitempty"`
	Closed     Overtake `json:"closed_form"`
	Simulated  Overtake `json:"simulated"`
	From       int      `json:"from"`
	To         int      `json:"to"`
}

// Scan is every algorithm's simulated and closed-form time at every N of a range.
type Scan struct {
	Params     Params   `json:"params"`
	From       int      `json:"from"`
	To         int      `json:"to"`
	Algorithms []string `json:"algorithms"`
	// Simulated[a][n−From] and Closed[a][n−From] are algorithm a's times at N = n.
	Simulated map[string][]float64 `json:"simulated_seconds"`
	Closed    map[string][]float64 `json:"closed_form_seconds"`
}

// ScanNodes simulates every algorithm at every N from lo to hi (p.Nodes is ignored). progress,
// if not nil, is called after each N with the count done and the total.
func ScanNodes(ctx context.Context, p Params, lo, hi int, algorithms []string, progress func(done, total int)) (*Scan, error) {
	if lo < 2 || hi < lo || hi > MaxNodes {
		return nil, fmt.Errorf("node range %d:%d: want 2 ≤ from ≤ to ≤ %d", lo, hi, MaxNodes)
	}
	sc := &Scan{Params: p, From: lo, To: hi, Algorithms: algorithms,
		Simulated: map[string][]float64{}, Closed: map[string][]float64{}}
	for n := lo; n <= hi; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q := p
		q.Nodes = n
		for _, a := range algorithms {
			plan, err := NewPlan(a, q)
			if err != nil {
				return nil, err
			}
			r, err := Run(ctx, q, plan)
			if err != nil {
				return nil, err
			}
			cf, err := ClosedForm(a, q)
			if err != nil {
				return nil, err
			}
			sc.Simulated[a] = append(sc.Simulated[a], r.Seconds)
			sc.Closed[a] = append(sc.Closed[a], cf)
		}
		if progress != nil {
			progress(n-lo+1, hi-lo+1)
		}
	}
	sc.Params.Nodes = 0
	return sc, nil
}

// Crossovers finds, in the scan, where each tree algorithm it holds overtakes the ring, by the
// closed forms and by the simulator, next to the paper's simplified inequality.
func (sc *Scan) Crossovers() []Crossover {
	var out []Crossover
	ring, ok := sc.Simulated[Ring]
	if !ok {
		return nil
	}
	for _, a := range []string{Tree, TreeRing, TreeRingAlt} {
		sim, ok := sc.Simulated[a]
		if !ok {
			continue
		}
		c := Crossover{Versus: a, From: sc.From, To: sc.To}
		if q, ok := PaperInequalities[a]; ok {
			c.Paper, c.PaperBelow = q.Text, q.Below()
		}
		for i := range sim {
			c.Closed.add(sc.From+i, sc.Closed[Ring][i], sc.Closed[a][i])
			c.Simulated.add(sc.From+i, ring[i], sim[i])
		}
		out = append(out, c)
	}
	return out
}

// Crossovers scans every N from lo to hi and finds where the tree, the tree embedded in a ring and
// its alternating version overtake the ring, by the closed forms and by the simulator.
func Crossovers(ctx context.Context, p Params, lo, hi int) ([]Crossover, error) {
	sc, err := ScanNodes(ctx, p, lo, hi, []string{Ring, Tree, TreeRing, TreeRingAlt}, nil)
	if err != nil {
		return nil, err
	}
	return sc.Crossovers(), nil
}
