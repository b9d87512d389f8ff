package switchctl_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/switchctl"
	_ "github.com/tetris-hil/tetris-hil/switchctl/fake"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/wiring-8x8-*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		w, err := switchctl.LoadWiring(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if w.Ports != 8 || len(w.Switches) != 20 || w.SHA256 == "" {
			t.Errorf("%s: %d ports, %d switches", f, w.Ports, len(w.Switches))
		}
		if s, ok := w.Switch(switchctl.Addr{Stage: 4, Index: 3}); !ok || s.Line == 0 || s != w.Switches[19] {
			t.Errorf("%s: Switch(4:3) = %+v, %v; want the last entry", f, s, ok)
		}
		if _, ok := w.Switch(switchctl.Addr{Stage: 5, Index: 0}); ok {
			t.Errorf("%s: Switch(5:0) found a switch outside the fabric", f)
		}
	}
}

func TestWiringErrors(t *testing.T) {
	good := switchtest.Fabric{Ports: 4, Backend: "serial", TR: 1000, TW: 2000}.YAML()
	// good's lines: 1 version, 2 ports, 3 backend, 4 t_r, 5 t_w, 6 switches:, 7.. the 6 switches.
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"version", "version: 1", "version: 2", "test.yaml:1: version: 2, want 1"},
		{"ports", "ports: 4", "ports: 6", "test.yaml:2: ports: 6, want a power of two"},
		{"backend", "backend: serial", "backend: serail", `test.yaml:3: backend: "serail", want one of crystal, fake, gpio, osw22, serial`},
		{"t_r unit", "t_r: 1us", "t_r: 1", `test.yaml:4: t_r: duration "1" has no unit`},
		{"t_w missing", "t_w: 2us\n", "", "t_w: missing"},
		{"duplicate switch", "{stage: 1, index: 0, channel: 3}", "{stage: 0, index: 0, channel: 3}", "test.yaml:9: switches[2]: switch 0:0 is mapped twice (first on line 7)"},
		{"duplicate channel", "{stage: 1, index: 1, channel: 4}", "{stage: 1, index: 1, channel: 1}", "test.yaml:10: switches[3]: channel 1 of switch 1:1 is already used on line 7"},
		{"out of the fabric", "{stage: 2, index: 1, channel: 6}", "{stage: 3, index: 1, channel: 6}", "test.yaml:12: switches[5]: switch 3:1 is not in a 4-port fabric (stages 0..2, index 0..1)"},
		{"missing switch", "  - {stage: 2, index: 1, channel: 6}\n", "", "test.yaml:6: switches: 1 of the 6 switches of a 4-port fabric are not mapped: 2:1"},
		{"no channel", "{stage: 0, index: 1, channel: 2}", "{stage: 0, index: 1}", "test.yaml:8: switches[1]: switch 0:1 has no channel"},
		{"unknown field", "{stage: 0, index: 1, channel: 2}", "{stage: 0, index: 1, chanel: 2}", `unknown field "chanel"`},
		{"syntax", "ports: 4", "ports: [4", "test.yaml"},
		{"read timeout", "t_w: 2us\n", "t_w: 2us\nserial:\n  read_timeout: 50ms\n", "test.yaml:7: serial.read_timeout: \"50ms\", want a multiple of 100ms"},
		{"crystal transport", "backend: serial", "backend: crystal\ncrystal:\n  transport: usb", `test.yaml:5: crystal.transport: "usb", want gpio or serial`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(good, tc.old, tc.new, 1)
			if y == good {
				t.Fatalf("the case changes nothing: %q not in\n%s", tc.old, good)
			}
			_, err := switchctl.ParseWiring("test.yaml", []byte(y))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseWiring = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestStages(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{2, 1}, {4, 3}, {8, 5}, {64, 11}, {128, 13}} {
		if got := switchctl.Stages(tc.n); got != tc.want {
			t.Errorf("Stages(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestWiringProperty: a generated map of any size parses, maps every switch once, and Check
// accepts exactly its own switches.
func TestWiringProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := 1 << rapid.IntRange(1, 5).Draw(t, "k")
		backend := rapid.SampledFrom([]string{"serial", "gpio", "fake"}).Draw(t, "backend")
		w, err := switchctl.ParseWiring("p.yaml", []byte(switchtest.Fabric{Ports: n, Backend: backend, TR: 1, TW: 1}.YAML()))
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Switches) != switchctl.Stages(n)*n/2 {
			t.Fatalf("%d switches for n=%d", len(w.Switches), n)
		}
		s := rapid.IntRange(0, switchctl.Stages(n)).Draw(t, "stage")
		i := rapid.IntRange(0, n/2).Draw(t, "index")
		err = w.Check([]switchctl.Change{{Switch: switchctl.Addr{Stage: s, Index: i}, State: switchctl.Cross}})
		inside := s < switchctl.Stages(n) && i < n/2
		if (err == nil) != inside {
			t.Fatalf("Check(%d:%d) on n=%d: %v", s, i, n, err)
		}
	})
}

func TestParseChangeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := switchctl.Change{Switch: switchctl.Addr{Stage: rapid.IntRange(0, 50).Draw(t, "s"), Index: rapid.IntRange(0, 500).Draw(t, "i")},
			State: switchctl.State(rapid.IntRange(0, 1).Draw(t, "st"))}
		got, err := switchctl.ParseChange(c.String())
		if err != nil || got != c {
			t.Fatalf("ParseChange(%q) = %v, %v", c.String(), got, err)
		}
	})
	for _, bad := range []string{"0:3", "0=bar", "a:1=bar", "0:-1=bar", "0:1=open", "0:1:2=bar"} {
		if _, err := switchctl.ParseChange(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("ParseChange(%q) = %v, want an error naming it", bad, err)
		}
	}
}

func TestRegistry(t *testing.T) {
	w := switchtest.Fabric{Ports: 2, Backend: "fake", TR: 1, TW: 1}.Wiring(t)
	if _, err := switchctl.OpenBackend(context.Background(), "nope", w, switchctl.Options{}); err == nil || !strings.Contains(err.Error(), `"nope" is not registered (registered: fake`) {
		t.Errorf("OpenBackend(nope) = %v", err)
	}
	switchctl.Register("twice", switchctl.BackendFunc(nil))
	switchctl.Register("twice", switchctl.BackendFunc(nil))
	if _, err := switchctl.OpenBackend(context.Background(), "twice", w, switchctl.Options{}); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("OpenBackend(twice) = %v", err)
	}
}

func ExampleOpen() {
	w, err := switchctl.ParseWiring("lab.yaml", []byte(`
version: 1
ports: 2
backend: fake
t_r: 1us
t_w: 10us
switches:
  - {stage: 0, index: 0}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	log := &switchctl.ChangeLog{}
	c, err := switchctl.Open(ctx, w, switchctl.Options{Log: log})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(ctx)
	if err := c.Apply(ctx, []switchctl.Change{{Switch: switchctl.Addr{Stage: 0, Index: 0}, State: switchctl.Cross}}); err != nil {
		fmt.Println(err)
		return
	}
	st, _ := c.States(ctx)
	e := log.Entries(0)[0]
	fmt.Println(st[0].Switch, st[0].State, "settled after its command:", !e.Settled.Before(e.Commanded))
	// Output: 0:0 cross settled after its command: true
}
