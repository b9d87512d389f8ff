package emulator

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTransferSpec(t *testing.T) {
	dir := t.TempDir()
	cal := filepath.Join(dir, "cal.json")
	f, err := os.Create(cal)
	if err != nil {
		t.Fatal(err)
	}
	if err := twoGPUCalibration().Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name string
		spec TransferSpec
		// want is the model's time for 0→1, 3000 bytes; field names the SpecError's field when
		// the spec is wrong.
		want  float64
		field string
	}{
		{"bandwidth", TransferSpec{Bandwidth: 1000}, 3, ""},
		{"calibration", TransferSpec{Bandwidth: 1000, Calibration: cal}, 10 + 3000, ""},
		{"calibration with a map", TransferSpec{Calibration: cal, GPUMap: "1, 0"}, 20 + 2*3000, ""},
		{"measured", TransferSpec{Measured: "testdata/measured.csv"}, 0.000017, ""},
		{"both files", TransferSpec{Calibration: cal, Measured: "testdata/measured.csv"}, 0, "calibration"},
		{"missing calibration", TransferSpec{Calibration: filepath.Join(dir, "none.json")}, 0, "calibration"},
		{"map not numbers", TransferSpec{Calibration: cal, GPUMap: "0,x"}, 0, "gpu-map"},
		{"map beyond the calibration", TransferSpec{Calibration: cal, GPUMap: "0,2"}, 0, "gpu-map"},
		{"map without calibration", TransferSpec{Bandwidth: 1, GPUMap: "0,1"}, 0, "gpu-map"},
		{"missing measured", TransferSpec{Measured: filepath.Join(dir, "none.csv")}, 0, "measured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.spec.Model()
			if tc.field != "" {
				var se *SpecError
				if !errors.As(err, &se) || se.Field != tc.field || !strings.HasPrefix(err.Error(), tc.field+" ") {
					t.Fatalf("error %v, want a SpecError for field %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Seconds(0, 1, 3000)
			if err != nil || got != tc.want {
				t.Errorf("%s: 0→1, 3000 bytes: %g s (%v), want %g", m.Name(), got, err, tc.want)
			}
		})
	}
}

func TestReconfigSpec(t *testing.T) {
	p, err := ReconfigSpec{Model: "parallel", Alpha: 5e-6, Tr: 1, Tw: 1}.ReconfigModel()
	if err != nil || p.Nominal() != 5e-6 {
		t.Errorf("parallel: %v, nominal %v", err, p)
	}
	tr, tw := 1e-6, 1e-5
	c, err := ReconfigSpec{Model: "controller", Alpha: 5e-6, Tr: tr, Tw: tw}.ReconfigModel()
	if err != nil || c.Nominal() != tr+tw {
		t.Errorf("controller: %v, nominal %v", err, c)
	}
	if c.Name() != "controller T_r=1µs T_w=10µs" {
		t.Errorf("controller with the defaults is named %q, as it always was: want %q", c.Name(), "controller T_r=1µs T_w=10µs")
	}
	b, err := ReconfigSpec{Model: "controller", Tr: tr, Tw: tw, Batch: 16, SerialSettle: true}.ReconfigModel()
	if err != nil || b.Nominal() != tr+tw || b.Name() != "controller T_r=1µs T_w=10µs B=16 serial settles" {
		t.Errorf("controller B=16, serial settles: %v, nominal %v, name %q", err, b.Nominal(), b.Name())
	}
	// 17 changes at 0 take two requests; the next command waits until they have settled.
	r := b.NewReconfigurer()
	if s, e := r.Command(0, 17); s != 0 || math.Abs(e-(2*tr+tw)) > 1e-18 {
		t.Errorf("17 changes with B=16: %v–%v, want 0–%v", s, e, 2*tr+tw)
	}
	if s, _ := r.Command(0, 1); math.Abs(s-(2*tr+tw)) > 1e-18 {
		t.Errorf("a command behind it starts at %v, want %v (serial settles)", s, 2*tr+tw)
	}
	var se *SpecError
	if _, err := (ReconfigSpec{Model: "controller", Batch: -1}).ReconfigModel(); !errors.As(err, &se) || se.Field != "batch" {
		t.Errorf("batch -1: error %v", err)
	}
	if _, err := (ReconfigSpec{Model: "serial"}).ReconfigModel(); !errors.As(err, &se) || se.Field != "reconfig-model" || se.Value != "serial" {
		t.Errorf("unknown model: error %v", err)
	}
}
