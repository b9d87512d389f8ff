package switchctl_test

import (
	"os"
	"testing"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

// FuzzParseWiring: any input is refused with an error or accepted as a map that covers every
// switch of its fabric exactly once; nothing panics.
func FuzzParseWiring(f *testing.F) {
	for _, p := range []string{"../examples/wiring-8x8-serial.yaml", "../examples/wiring-8x8-crystal.yaml", "../examples/wiring-8x8-osw22.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(switchtest.Fabric{Ports: 2, Backend: "gpio", TR: 1, TW: 1}.YAML()))
	f.Add([]byte("version: 1\nports: 2\nbackend: fake\nt_r: 1us\nt_w: 1us\nswitches:\n  - {stage: 0, index: 0}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := switchctl.ParseWiring("fuzz.yaml", data)
		if err != nil {
			return
		}
		seen := map[switchctl.Addr]bool{}
		for _, s := range w.Switches {
			if seen[s.Switch] || s.Switch.Stage >= switchctl.Stages(w.Ports) || s.Switch.Index >= w.Ports/2 {
				t.Fatalf("accepted map has switch %s twice or outside the fabric", s.Switch)
			}
			seen[s.Switch] = true
		}
		if len(seen) != switchctl.Stages(w.Ports)*w.Ports/2 {
			t.Fatalf("accepted map covers %d of %d switches", len(seen), switchctl.Stages(w.Ports)*w.Ports/2)
		}
	})
}
