package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

// TestCalibrateThenEmulate is the loop the calibration closes: calibrate on fake devices, then
// emulate with the file; and calibrate --demand, then emulate --measured with its table.
func TestCalibrateThenEmulate(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole) // the workers calibrate starts are this test binary
	dir := t.TempDir()
	cal := filepath.Join(dir, "cal.json")
	out, code, err := cli(t, "calibrate", "--fake", "--fake-gpus", "4", "--fake-alpha", "7us", "--fake-bandwidth", "250GB/s",
		"--seed", "5", "--sizes", "4KiB..256MiB", "--per-octave", "2", "--reps", "9", "--progress", "off", "-o", cal)
	if code != 0 {
		t.Fatalf("calibrate: exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"Calibration of 4 GPUs (fake devices)", "isolated: α (µs)", "permutation: bandwidth (GB/s)", "Worst fits", "Wrote " + cal} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate output lacks %q:\n%s", want, out)
		}
	}
	c, err := model.Load(cal)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 24 || c.Plan == nil || c.Plan.Engine != "fake" || !c.Inventory.Fake || len(c.Plan.Permutations) != 3 {
		t.Fatalf("calibration: %d pairs, plan %+v", len(c.Pairs), c.Plan)
	}
	demand := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(demand, []byte("0,1000000,0,5000\n0,0,2000000,0\n300000,0,0,1\n0,4096,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err = cli(t, "emulate", "--demand", demand, "--calibration", cal, "--algo", "tetris,bvn")
	if code != 0 || !strings.Contains(out, "tetris") {
		t.Fatalf("emulate --calibration: exit %d: %v\n%s", code, err, out)
	}
	if _, code, err = cli(t, "emulate", "--demand", demand, "--calibration", cal, "--gpu-map", "0,1,2,7"); code != 2 ||
		!strings.Contains(err.Error(), "GPU 7 is not among the GPUs the calibration was taken on (4 GPUs") {
		t.Errorf("emulate with a GPU the calibration lacks: exit %d, %v", code, err)
	}

	measured := filepath.Join(dir, "measured.json")
	out, code, err = cli(t, "calibrate", "--fake", "--fake-gpus", "4", "--demand", demand, "--measured-out", measured,
		"--sizes", "4KiB,1MiB,64MiB", "--pattern", "isolated", "--progress", "off", "-o", filepath.Join(dir, "cal2.json"))
	if code != 0 || !strings.Contains(out, "Measured 6 demand transfers") {
		t.Fatalf("calibrate --demand: exit %d: %v\n%s", code, err, out)
	}
	tab, err := emulator.LoadMeasuredTable(measured)
	if err != nil || len(tab.Measurements) != 6 {
		t.Fatalf("measured table: %+v, %v", tab, err)
	}
	out, code, err = cli(t, "emulate", "--demand", demand, "--measured", measured, "--algo", "tetris")
	if code != 0 {
		t.Fatalf("emulate --measured: exit %d: %v\n%s", code, err, out)
	}
}

// TestCalibrateShowGolden pins the report of a fixture calibration (three fake GPUs with a knee
// planted at 1 MiB): α and bandwidth matrices, the worst fits with their pieces.
func TestCalibrateShowGolden(t *testing.T) {
	out, code, err := cli(t, "calibrate", "show", "testdata/calibrate/knee3.json")
	if code != 0 {
		t.Fatalf("show: exit %d: %v", code, err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "calibrate", "knee3.show.golden.txt"), []byte(out))
}

// TestCalibrateShowAndPlot prints a calibration and draws it in both formats.
func TestCalibrateShowAndPlot(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"svg", "png"} {
		plot := filepath.Join(dir, "cal."+ext)
		out, code, err := cli(t, "calibrate", "show", "testdata/calibrate/knee3.json", "--plot", plot)
		if code != 0 {
			t.Fatalf("show: exit %d: %v\n%s", code, err, out)
		}
		for _, want := range []string{"Calibration of 3 of 8 GPUs", "isolated: α (µs)", "knee at", "Worst fits"} {
			if !strings.Contains(out, want) {
				t.Errorf("show lacks %q:\n%s", want, out)
			}
		}
		b, err := os.ReadFile(plot)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", plot, len(b), err)
		}
		if (ext == "png" && !bytes.HasPrefix(b, []byte("\x89PNG"))) || (ext == "svg" && !bytes.Contains(b[:200], []byte("<svg"))) {
			t.Errorf("%s is not a %s", plot, ext)
		}
	}
}

func TestCalibrateUsageErrors(t *testing.T) {
	badPartial := filepath.Join(t.TempDir(), "cal.json")
	if err := os.WriteFile(badPartial+".partial", []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--fake", "--copy", "dma"}, "--copy"},
		{[]string{"calibrate", "--fake", "--sizes", "1MiB..4KiB"}, "--sizes"},
		{[]string{"calibrate", "--fake", "--sizes", "4KiB,1MiB"}, "at least 3 sizes"},
		{[]string{"calibrate", "--fake", "--gpus", "0,9"}, `--gpus "0,9"`},
		{[]string{"calibrate", "--fake", "--pairs", "0-9"}, `"0-9"`},
		{[]string{"calibrate", "--fake", "--pattern", "ring"}, `"ring"`},
		{[]string{"calibrate", "--fake", "--reps", "0"}, "--reps 0"},
		{[]string{"calibrate", "--fake", "--fake-bandwidth", "250"}, "--fake-bandwidth"},
		{[]string{"calibrate", "--fake", "--fake-knee", "big"}, "--fake-knee"},
		{[]string{"calibrate", "--fake", "-o", "/nonexistent-dir/cal.json"}, "-o \"/nonexistent-dir/cal.json\""},
		{[]string{"calibrate", "--fake", "--resume", "-o", badPartial}, "--resume"},
		{[]string{"calibrate", "show", "testdata/emulate/hand4.csv"}, "hand4.csv"},
		{[]string{"calibrate", "show", "testdata/calibrate/knee3.json", "--plot", "x.gif"}, "--plot"},
	}
	for _, tt := range tests {
		_, code, err := cli(t, tt.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", tt.args, code, err, tt.want)
		}
	}
}

// TestCalibrateInterruptAndResume runs the real binary (this test binary as tetris-hil), stops it
// with SIGINT as Ctrl-C would, and resumes: the file equals an uninterrupted run's (same seed),
// timestamps aside.
func TestCalibrateInterruptAndResume(t *testing.T) {
	unsetCUDAVisible(t)
	dir := t.TempDir()
	args := []string{"calibrate", "--fake", "--fake-gpus", "3", "--sizes", "4KiB..1GiB", "--per-octave", "1", "--reps", "5",
		"--start-margin", "100ms", "--progress", "off", "--log-level", "error"}
	run := func(extra ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], append(args, extra...)...)
		cmd.Env = append(os.Environ(), envBeCLI+"="+cliRole)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	whole := filepath.Join(dir, "whole.json")
	cmd, out := run("-o", whole)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}

	cut := filepath.Join(dir, "cut.json")
	cmd, out = run("-o", cut)
	// The first finished step writes the partial file; the permutation rounds (38 steps released
	// 100 ms ahead each) keep the run going for seconds after it.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(cut + ".partial"); err == nil {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(out.String(), "--resume") {
		t.Fatalf("interrupted run: %v\n%s", err, out)
	}
	if _, err := os.Stat(cut + ".partial"); err != nil {
		t.Fatalf("no partial file: %v\n%s", err, out)
	}
	// Without --resume the partial file (an hour of measurement on a real server) is not
	// silently dropped: the run is refused, naming both ways on, and the file is left as it was.
	partial, _ := os.ReadFile(cut + ".partial")
	if _, code, err := cli(t, append(args, "-o", cut)...); code != 2 || err == nil ||
		!strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("a fresh run over a partial file: exit %d, %v; want exit 2 naming --resume and --overwrite", code, err)
	}
	if again, _ := os.ReadFile(cut + ".partial"); !bytes.Equal(again, partial) {
		t.Error("the refused run changed the partial file")
	}
	if _, code, err := cli(t, append(args, "-o", cut, "--resume", "--overwrite")...); code != 2 || err == nil {
		t.Errorf("--resume with --overwrite: exit %d, %v; want 2", code, err)
	}
	if _, code, err := cli(t, append(args, "-o", cut, "--resume", "--reps", "7")...); code != 2 || err == nil ||
		!strings.Contains(err.Error(), "plan.reps: 7 here, 5 in the file") {
		t.Errorf("resume with another plan: exit %d, %v; want exit 2 naming the field", code, err)
	}
	cmd, out = run("-o", cut, "--resume")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	if _, err := os.Stat(cut + ".partial"); !os.IsNotExist(err) {
		t.Errorf("partial file left after the resumed run finished: %v", err)
	}
	if a, b := stripTimes(t, whole), stripTimes(t, cut); a != b {
		t.Errorf("resumed calibration differs from the uninterrupted one")
	}
	// --overwrite discards a partial file and measures afresh.
	if err := os.WriteFile(cut+".partial", partial, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, out = run("-o", cut, "--overwrite")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("--overwrite: %v\n%s", err, out)
	}
	if _, err := os.Stat(cut + ".partial"); !os.IsNotExist(err) {
		t.Errorf("partial file left after --overwrite finished: %v", err)
	}
	if a, b := stripTimes(t, whole), stripTimes(t, cut); a != b {
		t.Errorf("--overwrite calibration differs from an uninterrupted one")
	}
}

func stripTimes(t *testing.T, path string) string {
	t.Helper()
	c, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c.Created, c.Started = "", ""
	b, _ := json.Marshal(c)
	return string(b)
}
