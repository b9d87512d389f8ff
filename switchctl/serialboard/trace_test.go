package serialboard_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

// Options.Trace hears every exchange after the identity: the command sent, the reply, the time.
func TestTrace(t *testing.T) {
	w := fabric(4, "").Wiring(t)
	b := boardemu.New(boardemu.Config{Channels: channels(w)}, nil)
	dev, host := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	go b.Serve(ctx, dev)
	t.Cleanup(func() { cancel(); dev.Close() })
	var mu sync.Mutex
	var seen []string
	trace := func(_, command, reply string, took time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil || took <= 0 {
			t.Errorf("%q: took %v, err %v", command, took, err)
		}
		seen = append(seen, command+" -> "+reply)
	}
	c, err := serialboard.NewBoard(ctx, w, switchctl.Options{Trace: trace}, host, w.Serial.ReadTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.States(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || !strings.HasPrefix(seen[0], "SW? ") {
		t.Errorf("traced %q, want the SW? query first", seen)
	}
}
