package main

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
)

// switch set --hold against the board emulator: the changed switch stays Cross for as long as
// the command runs (well past the settle time), and SIGINT puts every channel back to Bar
// (the board's log ends in SAFE) and exits 130. Without --hold the same set ends safe at once.
func TestSwitchSetHold(t *testing.T) {
	p := startBoard(t, boardemu.Config{Latency: 100 * time.Microsecond, Settle: 200 * time.Microsecond})
	w, err := switchctl.LoadWiring(serialWiring)
	if err != nil {
		t.Fatal(err)
	}
	channel := -1
	for _, s := range w.Switches {
		if s.Switch.String() == "0:3" {
			channel = s.Channel
		}
	}
	if channel < 0 {
		t.Fatal("the example wiring has no switch 0:3")
	}
	cmd := exec.Command(os.Args[0], "switch", "set", "0:3=cross", "--wiring", serialWiring, "--port", p.Path, "--hold")
	cmd.Env = append(os.Environ(), envBeMain+"=1")
	var stderr lockedBuilder // read while os/exec's copier writes it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "holding"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never said it was holding; stderr %q", stderr.String())
		}
	}
	for range 5 { // 0.5 s: hundreds of settle times
		if s := p.Board().State(channel); s != "CROSS" {
			t.Fatalf("channel %d is %s while held, want CROSS", channel, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still holding 10 s after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr %q", code, stderr.String())
	}
	if s := p.Board().State(channel); s != "BAR" {
		t.Errorf("channel %d is %s after the hold ended, want BAR (safe)", channel, s)
	}
	es := p.Board().Log().Entries()
	if last := es[len(es)-1]; last.Cmd != "SAFE" || last.Reply != "OK" {
		t.Errorf("the board's log ends in %+v, want SAFE answered OK", last)
	}

	// Without --hold: set, settle, safe, exit 0.
	if out, code, err := cli(t, "switch", "set", "0:3=cross", "--wiring", serialWiring, "--port", p.Path); code != 0 {
		t.Fatalf("set without --hold: exit %d (%v)\n%s", code, err, out)
	}
	if s := p.Board().State(channel); s != "BAR" {
		t.Errorf("channel %d is %s after a set without --hold, want BAR", channel, s)
	}
}

// lockedBuilder is a strings.Builder that a child's standard error may be copied into while the
// test reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
