package switchctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// WiringVersion is the wiring-map format version this package reads.
const WiringVersion = 1

// MaxPorts is the largest fabric a wiring map may describe: the Beneš fabric's own limit
// (benes.MaxPorts, 2^20), which the model applies to every schedule.
const MaxPorts = 1 << 20

// Wiring is a lab's wiring map: which backend drives the fabric, how to reach it, and which
// channel, pin(s) or port drives each switch. It is read from YAML (examples/wiring-*.yaml).
type Wiring struct {
	// Path and SHA256 identify the file it was read from (empty for a map built in code).
	Path, SHA256 string
	// Ports is the fabric size n (a power of two ≥ 2): 2·log2(n)−1 stages of n/2 switches.
	Ports int
	// Backend is the registered backend name: fake, serial, osw22, gpio or crystal.
	Backend string
	// TR is the nominal time one command takes (T_r); TW the settle time after a change (T_w).
	// The fake sleeps them; GPIO and crystal drivers wait TW before a change counts as settled;
	// the serial board confirms settling itself and TW only extends its reply timeout.
	TR, TW time.Duration
	// Batch is B, the most changes one request to the controller carries (a command of k changes
	// is ⌈k/B⌉ requests of T_r; 0 is no limit), and SerialSettle says that the controller takes
	// the next command only once the last has settled. The fake runs on them with T_r and T_w; a
	// replay through any backend is predicted with them (package ctlmodel). Batch defaults to 1,
	// and to 16 on the serial board, whose SW line carries 16 channels.
	Batch        int
	SerialSettle bool
	Serial       SerialConfig
	Crystal      CrystalConfig
	// Switches lists every switch of the fabric once, in file order.
	Switches []SwitchWiring
}

// SerialConfig is the serial transport of the serial board, the osw22 dialect and the crystal
// driver board.
type SerialConfig struct {
	// Port is the device (e.g. /dev/ttyACM0); the CLI's --port overrides it.
	Port string
	Baud int
	// ReadTimeout bounds every read; tarm/serial counts it in tenths of a second, so it is a
	// multiple of 100ms. An empty read within it means "no data yet".
	ReadTimeout time.Duration
	// Retries is how many times a command whose reply is garbled or missing is sent again.
	Retries int
	// ResetTimeout bounds the wait for the board's identity after opening the port (many boards
	// reset when the port opens).
	ResetTimeout time.Duration
}

// CrystalConfig configures the holographic crystal driver.
type CrystalConfig struct {
	// Transport is gpio (one pin per crystal, one high-voltage enable pin) or serial (a driver
	// board speaking the crystal commands of the serial protocol).
	Transport string
	// HVPin is the high-voltage enable pin (gpio transport).
	HVPin string
	// DeadTime separates switching one crystal off and the other on (break-before-make).
	DeadTime time.Duration
}

// SwitchWiring says what drives one switch; which fields apply depends on the backend.
type SwitchWiring struct {
	Switch Addr
	// Channel is the board channel (serial; crystal over serial).
	Channel int
	// Pin is the GPIO pin (gpio): low = Bar, high = Cross.
	Pin string
	// PinA and PinB are the crystal pins (crystal over gpio): A energised = Bar, B = Cross.
	PinA, PinB string
	// Port is the serial device of a single-switch product (osw22).
	Port string
	// Line is the line of the entry in the wiring file (0 for a map built in code).
	Line int
}

// Stages is the number of stages of an n-port Beneš fabric.
func Stages(ports int) int { return 2*bits.Len(uint(ports)) - 3 }

// rawWiring is the YAML form; durations are strings with units (2ms, 100us).
type rawWiring struct {
	Version      int         `yaml:"version"`
	Ports        int         `yaml:"ports"`
	Backend      string      `yaml:"backend"`
	TR           string      `yaml:"t_r"`
	TW           string      `yaml:"t_w"`
	Batch        *int        `yaml:"batch"`
	SerialSettle *bool       `yaml:"serial_settle"`
	Serial       *rawSerial  `yaml:"serial"`
	Crystal      *rawCrystal `yaml:"crystal"`
	Switches     []rawSwitch `yaml:"switches"`
}

type rawSerial struct {
	Port         string `yaml:"port"`
	Baud         int    `yaml:"baud"`
	ReadTimeout  string `yaml:"read_timeout"`
	Retries      *int   `yaml:"retries"`
	ResetTimeout string `yaml:"reset_timeout"`
}

type rawCrystal struct {
	Transport string `yaml:"transport"`
	HVPin     string `yaml:"hv_pin"`
	DeadTime  string `yaml:"dead_time"`
}

type rawSwitch struct {
	Stage   *int   `yaml:"stage"`
	Index   *int   `yaml:"index"`
	Channel *int   `yaml:"channel"`
	Pin     string `yaml:"pin"`
	PinA    string `yaml:"pin_a"`
	PinB    string `yaml:"pin_b"`
	Port    string `yaml:"port"`
}

// LoadWiring reads and validates the wiring map at path. Errors name the file, the line, the
// field and the value.
// The file is read through readlimit's limit for a wiring map before the YAML parser sees it
// (the parser takes many times a file's size in memory), and must be a regular file.
func LoadWiring(path string) (*Wiring, error) {
	data, err := readlimit.ReadFile(context.Background(), path, readlimit.Wiring)
	if err != nil {
		return nil, fmt.Errorf("wiring map: %w", err)
	}
	w, err := ParseWiring(path, data)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// ParseWiring reads and validates a wiring map; name is used in errors.
func ParseWiring(name string, data []byte) (*Wiring, error) {
	fail := func(line int, format string, a ...any) error {
		if line > 0 {
			return fmt.Errorf("wiring map %s:%d: %s", name, line, fmt.Sprintf(format, a...))
		}
		return fmt.Errorf("wiring map %s: %s", name, fmt.Sprintf(format, a...))
	}
	file, err := parseYAML(data)
	if err != nil {
		return nil, fail(0, "%s", yaml.FormatError(err, false, false))
	}
	if len(file.Docs) != 1 || file.Docs[0].Body == nil {
		return nil, fail(0, "want one YAML document, found %d", len(file.Docs))
	}
	body := file.Docs[0].Body
	var raw rawWiring
	if err := nodeToValue(body, &raw); err != nil {
		return nil, fail(0, "%s", yaml.FormatError(err, false, false))
	}
	at := func(path ...any) int { return lineOf(body, path...) }
	w := &Wiring{Path: name, Ports: raw.Ports, Backend: raw.Backend}
	sum := sha256.Sum256(data)
	w.SHA256 = hex.EncodeToString(sum[:])

	if raw.Version != WiringVersion {
		return nil, fail(at("version"), "version: %d, want %d", raw.Version, WiringVersion)
	}
	if raw.Ports < 2 || raw.Ports&(raw.Ports-1) != 0 || raw.Ports > MaxPorts {
		return nil, fail(at("ports"), "ports: %d, want a power of two from 2 to %d (the Beneš fabric's limit)", raw.Ports, MaxPorts)
	}
	need, ok := backendNeeds[raw.Backend]
	if !ok {
		return nil, fail(at("backend"), "backend: %q, want one of %s", raw.Backend, strings.Join(wiringBackends(), ", "))
	}
	dur := func(field, s string, def time.Duration, line int) (time.Duration, error) {
		if s == "" {
			if def < 0 {
				return 0, fail(line, "%s: missing (a duration with its unit, e.g. 2ms)", field)
			}
			return def, nil
		}
		v, err := units.ParseDuration(s)
		if err != nil {
			return 0, fail(line, "%s: %v", field, err)
		}
		if v > 3600 {
			return 0, fail(line, "%s: %q is above an hour", field, s)
		}
		return time.Duration(v*1e9 + 0.5), nil
	}
	if w.TR, err = dur("t_r", raw.TR, -1, at("t_r")); err != nil {
		return nil, err
	}
	if w.TW, err = dur("t_w", raw.TW, -1, at("t_w")); err != nil {
		return nil, err
	}
	w.Batch = 1
	if raw.Backend == "serial" {
		w.Batch = serialLine
	}
	if raw.Batch != nil {
		if *raw.Batch < 0 || *raw.Batch > 1<<20 {
			return nil, fail(at("batch"), "batch: %d, want B ≥ 1 changes per request (0: no limit)", *raw.Batch)
		}
		w.Batch = *raw.Batch
	}
	if raw.SerialSettle != nil {
		w.SerialSettle = *raw.SerialSettle
	}

	// Transport settings, with defaults where a section is absent.
	rs := raw.Serial
	if rs == nil {
		rs = &rawSerial{}
	}
	w.Serial = SerialConfig{Port: rs.Port, Baud: rs.Baud, Retries: 3}
	if w.Serial.Baud == 0 {
		w.Serial.Baud = 115200
	}
	if w.Serial.Baud < 0 {
		return nil, fail(at("serial", "baud"), "serial.baud: %d, want a positive baud rate", rs.Baud)
	}
	if rs.Retries != nil {
		if *rs.Retries < 0 || *rs.Retries > 100 {
			return nil, fail(at("serial", "retries"), "serial.retries: %d, want 0..100", *rs.Retries)
		}
		w.Serial.Retries = *rs.Retries
	}
	if w.Serial.ReadTimeout, err = dur("serial.read_timeout", rs.ReadTimeout, 100*time.Millisecond, at("serial", "read_timeout")); err != nil {
		return nil, err
	}
	if rt := w.Serial.ReadTimeout; rt < 100*time.Millisecond || rt%(100*time.Millisecond) != 0 || rt > 25500*time.Millisecond {
		return nil, fail(at("serial", "read_timeout"), "serial.read_timeout: %q, want a multiple of 100ms from 100ms to 25.5s (tarm/serial counts tenths of a second; zero would block forever)", rs.ReadTimeout)
	}
	if w.Serial.ResetTimeout, err = dur("serial.reset_timeout", rs.ResetTimeout, 5*time.Second, at("serial", "reset_timeout")); err != nil {
		return nil, err
	}
	rc := raw.Crystal
	if rc == nil {
		rc = &rawCrystal{}
	}
	w.Crystal = CrystalConfig{Transport: rc.Transport, HVPin: rc.HVPin}
	if w.Crystal.DeadTime, err = dur("crystal.dead_time", rc.DeadTime, time.Millisecond, at("crystal", "dead_time")); err != nil {
		return nil, err
	}
	if raw.Backend == "crystal" {
		switch rc.Transport {
		case "gpio":
			need = needPins
			if rc.HVPin == "" {
				return nil, fail(at("crystal"), "crystal.hv_pin: missing (the high-voltage enable pin)")
			}
		case "serial":
			need = needChannel
		default:
			return nil, fail(at("crystal", "transport"), "crystal.transport: %q, want gpio or serial", rc.Transport)
		}
	}

	// Switches: every switch of the fabric exactly once, no channel, pin or port twice.
	stages, per := Stages(raw.Ports), raw.Ports/2
	seen := map[Addr]int{}
	used := map[string]int{} // "channel 3", "pin GPIO17", "port /dev/x" → line
	if w.Crystal.HVPin != "" && raw.Backend == "crystal" {
		used["pin "+w.Crystal.HVPin] = at("crystal", "hv_pin")
	}
	for i, rsw := range raw.Switches {
		line := at("switches", i)
		entry := fmt.Sprintf("switches[%d]", i)
		if rsw.Stage == nil || rsw.Index == nil {
			return nil, fail(line, "%s: stage and index are required", entry)
		}
		a := Addr{*rsw.Stage, *rsw.Index}
		if a.Stage < 0 || a.Stage >= stages || a.Index < 0 || a.Index >= per {
			return nil, fail(line, "%s: switch %s is not in a %d-port fabric (stages 0..%d, index 0..%d)", entry, a, raw.Ports, stages-1, per-1)
		}
		if prev, dup := seen[a]; dup {
			return nil, fail(line, "%s: switch %s is mapped twice (first on line %d)", entry, a, prev)
		}
		seen[a] = line
		sw := SwitchWiring{Switch: a, Pin: rsw.Pin, PinA: rsw.PinA, PinB: rsw.PinB, Port: rsw.Port, Line: line}
		if rsw.Channel != nil {
			sw.Channel = *rsw.Channel
		}
		var keys []string
		switch need {
		case needChannel:
			if rsw.Channel == nil {
				return nil, fail(line, "%s: switch %s has no channel (backend %s drives switches by board channel)", entry, a, raw.Backend)
			}
			if *rsw.Channel < 0 || *rsw.Channel > 9999 {
				return nil, fail(line, "%s: channel %d, want 0..9999", entry, *rsw.Channel)
			}
			keys = []string{fmt.Sprintf("channel %d", *rsw.Channel)}
		case needPin:
			if rsw.Pin == "" {
				return nil, fail(line, "%s: switch %s has no pin (backend gpio drives each switch with one pin)", entry, a)
			}
			keys = []string{"pin " + rsw.Pin}
		case needPins:
			if rsw.PinA == "" || rsw.PinB == "" {
				return nil, fail(line, "%s: switch %s needs pin_a and pin_b (one pin per crystal)", entry, a)
			}
			keys = []string{"pin " + rsw.PinA, "pin " + rsw.PinB}
			if rsw.PinA == rsw.PinB {
				return nil, fail(line, "%s: switch %s: pin_a and pin_b are both %q", entry, a, rsw.PinA)
			}
		case needPort:
			if rsw.Port == "" {
				return nil, fail(line, "%s: switch %s has no port (backend osw22 has one serial port per switch)", entry, a)
			}
			keys = []string{"port " + rsw.Port}
		}
		for _, k := range keys {
			if prev, dup := used[k]; dup {
				return nil, fail(line, "%s: %s of switch %s is already used on line %d", entry, k, a, prev)
			}
			used[k] = line
		}
		w.Switches = append(w.Switches, sw)
	}
	if len(seen) != stages*per {
		// The first few missing switches, found in order; the count is known without listing
		// them all (a large fabric has millions).
		const listed = 8
		var missing []string
		for s := 0; s < stages && len(missing) < listed; s++ {
			for i := 0; i < per && len(missing) < listed; i++ {
				if _, ok := seen[Addr{s, i}]; !ok {
					missing = append(missing, Addr{s, i}.String())
				}
			}
		}
		more := ""
		if n := stages*per - len(seen); n > len(missing) {
			more = fmt.Sprintf(" and %d more", n-len(missing))
		}
		return nil, fail(at("switches"), "switches: %d of the %d switches of a %d-port fabric are not mapped: %s%s",
			stages*per-len(seen), stages*per, raw.Ports, strings.Join(missing, ", "), more)
	}
	return w, nil
}

// serialLine is how many channels one SW line of the serial board carries (serialboard.MaxBatch,
// which imports this package).
const serialLine = 16

// Model is the controller model of the map: T_r, T_w, B and the settle rule.
func (w *Wiring) Model() ctlmodel.Model {
	return ctlmodel.Model{TR: w.TR.Seconds(), TW: w.TW.Seconds(), Batch: w.Batch, SerialSettle: w.SerialSettle}
}

type need int

const (
	needNothing need = iota
	needChannel
	needPin
	needPins
	needPort
)

// backendNeeds says which field drives a switch for each backend the wiring map knows
// (crystal: decided by its transport).
var backendNeeds = map[string]need{
	"fake": needNothing, "serial": needChannel, "osw22": needPort, "gpio": needPin, "crystal": needNothing,
}

func wiringBackends() []string {
	var names []string
	for n := range backendNeeds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// lineOf finds the line of the node at path (map keys as strings, sequence indices as ints);
// 0 when it is not there.
func lineOf(n ast.Node, path ...any) int {
	line := 0
	if n != nil && n.GetToken() != nil {
		line = n.GetToken().Position.Line
	}
	for _, p := range path {
		switch k := p.(type) {
		case string:
			var values []*ast.MappingValueNode
			switch m := n.(type) {
			case *ast.MappingNode:
				values = m.Values
			case *ast.MappingValueNode:
				values = []*ast.MappingValueNode{m}
			}
			found := false
			for _, mv := range values {
				if mv.Key != nil && mv.Key.GetToken() != nil && mv.Key.GetToken().Value == k {
					line, n, found = mv.Key.GetToken().Position.Line, mv.Value, true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			seq, ok := n.(*ast.SequenceNode)
			if !ok || k >= len(seq.Values) {
				return line
			}
			n = seq.Values[k]
			if tok := n.GetToken(); tok != nil {
				line = tok.Position.Line
			}
		}
	}
	return line
}

// Switch returns the wiring of one switch.
func (w *Wiring) Switch(a Addr) (SwitchWiring, bool) {
	for _, s := range w.Switches {
		if s.Switch == a {
			return s, true
		}
	}
	return SwitchWiring{}, false
}

// Check returns an error naming every change whose switch is not in the map (so that nothing
// is commanded when one is wrong), and any switch named twice in one batch.
func (w *Wiring) Check(changes []Change) error {
	mapped := make(map[Addr]bool, len(w.Switches))
	for _, s := range w.Switches {
		mapped[s.Switch] = true
	}
	var errs []error
	twice := map[Addr]bool{}
	for _, c := range changes {
		if !mapped[c.Switch] {
			errs = append(errs, fmt.Errorf("switch %s is not in the wiring map %s", c.Switch, w.Path))
		}
		if c.State != Bar && c.State != Cross {
			errs = append(errs, fmt.Errorf("switch %s: state %s cannot be commanded (want bar or cross)", c.Switch, c.State))
		}
		if twice[c.Switch] {
			errs = append(errs, fmt.Errorf("switch %s appears twice in one batch", c.Switch))
		}
		twice[c.Switch] = true
	}
	return errors.Join(errs...)
}

// parseYAML and nodeToValue call the YAML library, turning a panic inside it (FuzzParseWiring
// found a nil dereference in go-yaml v1.19.2 on a tagged empty sequence entry) into an error:
// a malformed map is bad input, never a crash.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (the YAML parser failed: %v)", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

func nodeToValue(n ast.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed YAML (the YAML decoder failed: %v)", r)
		}
	}()
	return yaml.NodeToValue(n, v, yaml.DisallowUnknownField())
}
