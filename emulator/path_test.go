package emulator

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The order's inline wiring must be benes.Fabric.Next on every output lane of every stage but
// the last, for every fabric size up to 2^12 ports.
func TestWiringIsFabricNext(t *testing.T) {
	for n := 2; n <= 1<<12; n *= 2 {
		f, err := benes.New(n)
		if err != nil {
			t.Fatal(err)
		}
		w := newWiring(f)
		for stage := 0; stage < f.Stages()-1; stage++ {
			for sw := 0; sw < n/2; sw++ {
				for out := 0; out < 2; out++ {
					ns, nsw, nin := f.Next(stage, sw, out)
					gsw, gin := w.next(stage, sw, out)
					if ns != stage+1 || gsw != nsw || gin != nin {
						t.Fatalf("n=%d stage %d switch %d out %d: wiring gives (%d, %d), Fabric.Next (%d, %d, %d)", n, stage, sw, out, gsw, gin, ns, nsw, nin)
					}
				}
			}
		}
	}
}

// physical must accept exactly the paths that benes.Fabric.CheckPath accepts: real paths and
// paths with one field changed, cut short or lengthened.
func TestPropertyPhysicalIsCheckPath(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := 1 << rapid.IntRange(1, 7).Draw(t, "k")
		f, _ := benes.New(n)
		src, dst := rapid.IntRange(0, n-1).Draw(t, "src"), rapid.IntRange(0, n-1).Draw(t, "dst")
		p := f.PathFrom(src, dst, rapid.Uint32Range(0, uint32(max(n/2-1, 0))).Draw(t, "choices"))
		switch rapid.IntRange(0, 3).Draw(t, "mutation") {
		case 1:
			i := rapid.IntRange(0, len(p)-1).Draw(t, "hop")
			v := rapid.IntRange(-2, n).Draw(t, "value")
			switch rapid.IntRange(0, 3).Draw(t, "field") {
			case 0:
				p[i].Stage = v
			case 1:
				p[i].Switch = v
			case 2:
				p[i].In = v
			case 3:
				p[i].Out = v
			}
		case 2:
			p = p[:rapid.IntRange(0, len(p)-1).Draw(t, "length")]
		case 3:
			p = append(p, p[len(p)-1])
		}
		src2 := src
		if rapid.Bool().Draw(t, "other ports") {
			src2, dst = rapid.IntRange(-1, n).Draw(t, "src2"), rapid.IntRange(-1, n).Draw(t, "dst2")
		}
		got, err := newWiring(f).physical(src2, dst, p), f.CheckPath(src2, dst, benes.PathOf(p))
		if got != (err == nil) {
			t.Fatalf("n=%d %d→%d path %v: physical says %v, CheckPath %v", n, src2, dst, p, got, err)
		}
	})
}
