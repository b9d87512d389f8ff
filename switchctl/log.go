package switchctl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/safefile"
)

// Entry is one change as the hardware carried it out.
type Entry struct {
	// Seq numbers the entries of a log from 1; Batch numbers the Apply calls (and safe-state
	// commands, Halt) from 1, so the entries of one batch share it.
	Seq   int `json:"seq"`
	Batch int `json:"batch"`
	// Switch and State: the change; Halt records every switch with its safe state.
	Switch Addr  `json:"switch"`
	State  State `json:"state"`
	// Halt marks the entries of a safe-state command.
	Halt bool `json:"halt,omitempty"`
	// Commanded is when the command carrying the change was sent; Acknowledged when the device
	// accepted it (its reply came back, the pin write returned; zero where a backend cannot
	// tell); Settled when the device confirmed it settled or its settle time T_w elapsed.
	Commanded    time.Time `json:"commanded"`
	Acknowledged time.Time `json:"acknowledged,omitzero"`
	Settled      time.Time `json:"settled,omitzero"`
}

// ChangeLog records every change a Controller makes, in order. It is safe for concurrent use;
// one log may be shared by several controllers.
type ChangeLog struct {
	mu      sync.Mutex
	entries []Entry
	batches int
}

// NewBatch returns the number of a new batch; a backend calls it once per Apply or Halt.
func (l *ChangeLog) NewBatch() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches++
	return l.batches
}

// Add appends entries (numbering them); a nil log records nothing, so backends need not check.
func (l *ChangeLog) Add(es ...Entry) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range es {
		e.Seq = len(l.entries) + 1
		l.entries = append(l.entries, e)
	}
}

// Len is the number of entries so far.
func (l *ChangeLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Entries returns a copy of the entries from index from (0 for all): the live runner reads what
// one Apply added with Entries(before).
func (l *ChangeLog) Entries(from int) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from < 0 || from > len(l.entries) {
		from = len(l.entries)
	}
	return append([]Entry(nil), l.entries[from:]...)
}

// WriteJSONL writes one JSON object per entry and line, in order.
func (l *ChangeLog) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range l.Entries(0) {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes the log as JSON lines to path (safely: see internal/safefile).
func (l *ChangeLog) WriteFile(path string) error {
	var b bytes.Buffer
	if err := l.WriteJSONL(&b); err != nil {
		return err
	}
	if err := safefile.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	return nil
}

// ReadChangeLog reads a change log written by WriteJSONL; errors name the file and line.
func ReadChangeLog(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("change log: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var e Entry
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("change log %s:%d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("change log %s: %w", path, err)
	}
	return out, nil
}
