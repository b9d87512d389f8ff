package trace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

// Each importer's output for a fixed input is pinned by a golden file; the routing importer's is
// in routing_test.go.
func TestImportGolden(t *testing.T) {
	for _, c := range []struct {
		in, golden string
		o          LoadOptions
	}{
		{"csv/savetxt.csv", "import-csv.json", LoadOptions{}},
		{"npy/f8_3d.npy", "import-npy-pairs.json", LoadOptions{Layout: LayoutPairs}},
		{"npy/u2_2d.npy", "import-npy-layers.json", LoadOptions{}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", c.in))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Parse(data, c.in, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		b, err := tr.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, "testdata/golden/"+c.golden, b)
	}
}
