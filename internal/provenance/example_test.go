package provenance_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
)

// A run record lists its inputs with their digests; an input built into the tool has none.
func ExampleFiles() {
	dir, _ := os.MkdirTemp("", "provenance")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demand.csv")
	_ = os.WriteFile(path, []byte("0,1\n1,0\n"), 0o644)
	inputs, err := provenance.Files([2]string{"demand", path}, [2]string{"calibration", ""})
	if err != nil {
		fmt.Println(err)
		return
	}
	inputs = append(inputs, provenance.Builtin("trace", "built-in trace"))
	for _, in := range inputs {
		fmt.Printf("%s %s %.12s\n", in.Role, filepath.Base(in.Path), in.SHA256)
	}
	// Output:
	// demand demand.csv 6101ec16015a
	// trace built-in trace
}
