package switchctl

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options are what a backend gets at Open besides the wiring map.
type Options struct {
	// Log receives every change (nil: nothing is recorded).
	Log *ChangeLog
	// Port overrides the wiring map's serial port (the CLI's --port).
	Port string
	// Trace, when set, is told of every command exchanged with a serial board: the line sent,
	// the reply (empty on failure), how long the exchange took, and its error. The CLI logs it
	// at debug level, which is what one wants when a board in the lab does not answer.
	Trace func(port, command, reply string, took time.Duration, err error)
}

// Backend opens controllers of one kind. Backends register an implementation by name in an
// init function; importing the package is what makes the name available (database/sql style).
type Backend interface {
	Open(ctx context.Context, w *Wiring, opts Options) (Controller, error)
}

// BackendFunc adapts a function to Backend.
type BackendFunc func(ctx context.Context, w *Wiring, opts Options) (Controller, error)

// Open calls f.
func (f BackendFunc) Open(ctx context.Context, w *Wiring, opts Options) (Controller, error) {
	return f(ctx, w, opts)
}

var (
	registryMu sync.Mutex
	registry   = map[string]Backend{}
	// twice remembers names registered more than once; Open of such a name fails rather than
	// picking one (Register has no caller to return an error to, and must not panic).
	twice = map[string]bool{}
)

// Register makes a backend available under name. Registering a name twice makes Open of that
// name fail with an error saying so.
func Register(name string, b Backend) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup || b == nil {
		twice[name] = true
	}
	registry[name] = b
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open opens the backend the wiring map names.
func Open(ctx context.Context, w *Wiring, opts Options) (Controller, error) {
	return OpenBackend(ctx, w.Backend, w, opts)
}

// OpenBackend opens the named backend with w (e.g. "fake" for a map written for real hardware).
func OpenBackend(ctx context.Context, name string, w *Wiring, opts Options) (Controller, error) {
	registryMu.Lock()
	b, ok := registry[name]
	dup := twice[name]
	registryMu.Unlock()
	switch {
	case dup:
		return nil, fmt.Errorf("switch backend %q is registered more than once (or as nil)", name)
	case !ok:
		have := Backends()
		return nil, fmt.Errorf("switch backend %q is not registered (registered: %s); import its package, e.g. switchctl/serialboard",
			name, strings.Join(have, ", "))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.Open(ctx, w, opts)
}
