package boardemu

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// Close returns at once while a client holds the port open and sends nothing: the emulator's
// read of the master is then waiting for data, and must not keep Close (and a test's cleanup)
// waiting with it.
func TestCloseWhileClientSilent(t *testing.T) {
	p, err := StartPTY(context.Background(), New(Config{Channels: []int{0}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	client, err := os.OpenFile(p.Path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.WriteString("\n"); err != nil { // connected: the read now waits for more
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !p.Connected(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the emulator never saw the client")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waiting 5 s after it was called, with the client's port open and silent")
	}
}
