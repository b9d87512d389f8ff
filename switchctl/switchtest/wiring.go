package switchtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Fabric describes a generated wiring map for tests.
type Fabric struct {
	Ports   int
	Backend string
	TR, TW  time.Duration
	// Header is extra YAML after the common fields (serial:, crystal: sections).
	Header string
	// Ports of the osw22 backend, one per switch in stage-major order.
	SwitchPorts []string
}

// YAML returns the wiring map: every switch in stage-major order, board channels from 1, GPIO
// pins "TPIN<k>", crystal pins "TXA<k>"/"TXB<k>" (k from 0; T for test, so that no real
// pin name is taken), as the backend needs.
func (f Fabric) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nports: %d\nbackend: %s\nt_r: %dus\nt_w: %dus\n%s", f.Ports, f.Backend,
		f.TR.Microseconds(), f.TW.Microseconds(), f.Header)
	b.WriteString("switches:\n")
	k := 0
	crystalGPIO := strings.Contains(f.Header, "transport: gpio")
	for s := 0; s < switchctl.Stages(f.Ports); s++ {
		for i := 0; i < f.Ports/2; i++ {
			fmt.Fprintf(&b, "  - {stage: %d, index: %d", s, i)
			switch {
			case f.Backend == "gpio":
				fmt.Fprintf(&b, ", pin: TPIN%d", k)
			case f.Backend == "crystal" && crystalGPIO:
				fmt.Fprintf(&b, ", pin_a: TXA%d, pin_b: TXB%d", k, k)
			case f.Backend == "osw22":
				fmt.Fprintf(&b, ", port: %q", f.SwitchPorts[k])
			default:
				fmt.Fprintf(&b, ", channel: %d", k+1)
			}
			b.WriteString("}\n")
			k++
		}
	}
	return b.String()
}

// Wiring parses f.YAML, failing the test on error.
func (f Fabric) Wiring(t testing.TB) *switchctl.Wiring {
	t.Helper()
	w, err := switchctl.ParseWiring("test.yaml", []byte(f.YAML()))
	if err != nil {
		t.Fatal(err)
	}
	return w
}
