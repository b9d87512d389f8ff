package hil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Engines carries transfers on transfer engines opened in this process, one per endpoint: the
// fake engine without worker processes (no process start-up, no pipe round trip per copy), or
// any registered driver for a GPU this process may drive. Buffers are shared between the
// endpoints' engines by the same Export/Import handles worker processes exchange.
type Engines struct {
	engines []transfer.Engine
	buf     map[[2]int]pairBuf
	kind    transfer.Kind
}

// OpenEngines opens driver for every endpoint, endpoint e on device devs[e], with options, and
// a destination buffer for every pair in pairs (Pairs).
func OpenEngines(ctx context.Context, driver, options string, devs []transfer.Device, pairs map[[2]int]int64, kind transfer.Kind) (*Engines, error) {
	if _, err := transfer.ParseKind(string(kind)); err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	es := &Engines{buf: map[[2]int]pairBuf{}, kind: kind}
	for e, d := range devs {
		en, err := transfer.Open(ctx, driver, transfer.Config{Device: d, Options: options})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("hil: engine for endpoint %d (GPU %d): %w", e, d.GPU, err), es.Close())
		}
		es.engines = append(es.engines, en)
	}
	for _, k := range sortedPairs(pairs) {
		src, dst := k[0], k[1]
		if src < 0 || src >= len(devs) || dst < 0 || dst >= len(devs) {
			return nil, errors.Join(fmt.Errorf("hil: a circuit from endpoint %d to %d, but only endpoints 0..%d have GPUs", src, dst, len(devs)-1), es.Close())
		}
		if pairs[k] <= 0 {
			continue
		}
		rid, h, err := es.engines[dst].Export(ctx, pairs[k])
		id := rid
		if err == nil && src != dst {
			id, err = es.engines[src].Import(ctx, h)
		}
		if errors.Is(err, transfer.ErrIPCUnsupported) {
			id, err = es.engines[src].Peer(ctx, devs[dst], pairs[k])
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("hil: buffer for endpoint %d → %d, %d bytes: %w", src, dst, pairs[k], err), es.Close())
		}
		es.buf[k] = pairBuf{id: id, bytes: pairs[k]}
		if _, err := es.engines[src].Copy(ctx, id, transfer.Copy{Bytes: pairs[k], Reps: 1, Kind: kind}); err != nil {
			return nil, errors.Join(fmt.Errorf("hil: warm-up copy endpoint %d → %d: %w", src, dst, err), es.Close())
		}
	}
	return es, nil
}

// Transfer makes one timed copy on src's engine into the pair's buffer.
func (es *Engines) Transfer(ctx context.Context, src, dst int, bytes int64) (time.Duration, time.Duration, error) {
	if bytes == 0 {
		now := transfer.Monotonic()
		return now, now, nil
	}
	b, ok := es.buf[[2]int{src, dst}]
	if !ok || bytes > b.bytes {
		return 0, 0, fmt.Errorf("no buffer of %d bytes for endpoint %d → %d (the engines were opened for other schedules)", bytes, src, dst)
	}
	tm, err := es.engines[src].Copy(ctx, b.id, transfer.Copy{Bytes: bytes, Reps: 1, Kind: es.kind})
	if err != nil {
		return 0, 0, err
	}
	return tm.HostStart, tm.HostEnd, nil
}

// Close closes every engine.
func (es *Engines) Close() error {
	var errs []error
	for _, en := range es.engines {
		errs = append(errs, en.Close())
	}
	es.engines = nil
	return errors.Join(errs...)
}
