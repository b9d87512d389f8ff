package affinity

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAndString(t *testing.T) {
	tests := []struct {
		in   string
		want Set
		str  string
	}{
		{"", Set{}, ""},
		{"0", Set{0}, "0"},
		{"0-3", Set{0, 1, 2, 3}, "0-3"},
		{"0-1,4,6-7", Set{0, 1, 4, 6, 7}, "0-1,4,6-7"},
		{"7,0-2,1", Set{0, 1, 2, 7}, "0-2,7"}, // unsorted, overlapping input is normalised
		{" 3,5 \n", Set{3, 5}, "3,5"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if !got.Equal(tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.str {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, s, tt.str)
		}
	}
	for _, bad := range []string{"a", "3-1", "1,,2", "-1", "1-x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", bad)
		}
	}
}

func TestMask(t *testing.T) {
	// CPUs 0-55 and 112-167 (one socket of a DGX H100 with hyperthreads) in 64-bit words.
	s, _ := Parse("0-55,112-167")
	words := s.Mask(64)
	want := []uint{1<<56 - 1, 0xffff000000000000, 0xffffffffff}
	if len(words) != len(want) {
		t.Fatalf("Mask = %x, want %x", words, want)
	}
	for i := range want {
		if words[i] != want[i] {
			t.Fatalf("Mask word %d = %x, want %x", i, words[i], want[i])
		}
	}
	if back := FromMask(words, 64); !back.Equal(s) {
		t.Errorf("FromMask(Mask(s)) = %s, want %s", back, s)
	}
	if got := FromMask([]uint{0b1010, 0b1}, 4); !got.Equal(Of(1, 3, 4)) {
		t.Errorf("FromMask 4-bit words = %s, want 1,3-4", got)
	}
}

func TestIntersect(t *testing.T) {
	even, _ := Parse("0,2,4,6")
	if got := even.Intersect(Of(0, 1)); !got.Equal(Of(0)) {
		t.Errorf("got %s, want 0", got)
	}
	if got := even.Intersect(Of(1, 3)); len(got) != 0 {
		t.Errorf("got %s, want empty", got)
	}
}

func writeTask(t *testing.T, dir string, tid, list string) {
	t.Helper()
	p := filepath.Join(dir, "task", tid)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	status := "Name:\tworker\nCpus_allowed:\t3\nCpus_allowed_list:\t" + list + "\nVoluntary_ctxt_switches:\t1\n"
	if err := os.WriteFile(filepath.Join(p, "status"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckThreads(t *testing.T) {
	dir := t.TempDir()
	writeTask(t, dir, "100", "0-3")
	writeTask(t, dir, "101", "0-3")
	n, err := CheckThreads(dir, Of(0, 1, 2, 3))
	if err != nil || n != 2 {
		t.Fatalf("CheckThreads = %d, %v; want 2, nil", n, err)
	}
	writeTask(t, dir, "102", "0-7")
	n, err = CheckThreads(dir, Of(0, 1, 2, 3))
	var mm *MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("CheckThreads with a stray thread = %v, want *MismatchError", err)
	}
	if n != 3 || len(mm.Threads) != 1 || mm.Threads[0].TID != 102 || mm.Threads[0].Got.String() != "0-7" {
		t.Errorf("mismatch = %+v (checked %d), want thread 102 on 0-7 of 3", mm, n)
	}
	if !strings.Contains(err.Error(), "thread 102 on 0-7") {
		t.Errorf("error %q does not name the thread", err)
	}
}

func TestCheckThreadsSelf(t *testing.T) {
	avail, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckThreads("/proc/self", avail); err != nil {
		t.Errorf("this process's threads are not all on %s: %v", avail, err)
	}
}

// TestStartPinned starts a real child from a pinned thread and reads the child's own view of its
// CPUs; afterwards no thread of this process may still be pinned.
func TestStartPinned(t *testing.T) {
	avail, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) < 2 {
		t.Skipf("needs 2 CPUs to tell a pinned child from an unpinned one; have %s", avail)
	}
	target := Of(avail[len(avail)-1])
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
	cmd.Stdout = &out
	applied, err := StartPinned(func() error { return SetThread(target) }, func(Set) error { return cmd.Start() })
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !applied.Equal(target) {
		t.Errorf("applied = %s, want %s", applied, target)
	}
	got, err := allowedList(out.Bytes())
	if err != nil {
		t.Fatalf("child printed %q: %v", out.String(), err)
	}
	if !got.Equal(target) {
		t.Errorf("child ran on %s, want %s", got, target)
	}
	if _, err := CheckThreads("/proc/self", avail); err != nil {
		t.Errorf("parent thread not restored: %v", err)
	}
}

func TestStartPinnedPinError(t *testing.T) {
	started := false
	_, err := StartPinned(func() error { return errors.New("nvml says no") }, func(Set) error { started = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "nvml says no") || started {
		t.Errorf("err = %v, started = %v; want the pin error and no start", err, started)
	}
}
