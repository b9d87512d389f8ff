package worker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
)

// FuzzServe feeds arbitrary request lines to the worker's protocol loop (fake engine): it never
// panics or grows without bound, and every line it writes is a response to a request it read, in
// order, before it stops at the first line that is not a request.
func FuzzServe(f *testing.F) {
	f.Add([]byte(`{"id":1,"op":"export","bytes":4096}` + "\n" + `{"id":2,"op":"copy","buffer":1,"copy":{"bytes":4096,"reps":3,"warmup":1,"kind":"ce","verify":true}}` + "\n" + `{"id":3,"op":"free","buffer":1}` + "\n" + `{"id":4,"op":"quit"}` + "\n"))
	f.Add([]byte(`{"id":1,"op":"peer","peer":{"gpu":1,"cuda_ordinal":1,"bus_id":"x"},"bytes":1}` + "\n" + `{"id":2,"op":"import","handle":"dGV0cmlzLWhpbC1mYWtlAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}` + "\n"))
	f.Add([]byte(`{"id":1,"op":"copy","buffer":9,"copy":{"bytes":-1,"reps":1000000000,"kind":"sm"}}` + "\n" + `{"op":"nope"}` + "\n" + `not json` + "\n"))
	f.Add([]byte(`{"id":1,"op":"copy"}` + "\n" + `{"id":2,"op":"peer"}` + "\n" + `{"id":3,"op":"check"}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		eng, err := transfer.Open(context.Background(), "fake", transfer.Config{Device: transfer.Device{GPU: 0}, Options: fake.Defaults.String()})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		// A copy released far in the future (start_at_ns) waits for it, as it should; the
		// deadline ends that wait.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		var out bytes.Buffer
		_ = worker.ServeForFuzz(ctx, eng, bytes.NewReader(in), &out)
		var ids []uint64
		sc := bufio.NewScanner(bytes.NewReader(in))
		sc.Buffer(nil, worker.MaxMessage)
		for sc.Scan() {
			var req worker.Request
			if json.Unmarshal(sc.Bytes(), &req) != nil {
				break
			}
			ids = append(ids, req.ID)
			if req.Op == worker.OpQuit {
				break
			}
		}
		osc := bufio.NewScanner(&out)
		osc.Buffer(nil, worker.MaxMessage)
		n := 0
		for osc.Scan() {
			var r worker.Response
			if err := json.Unmarshal(osc.Bytes(), &r); err != nil {
				t.Fatalf("response %d is not a Response: %v: %q", n, err, osc.Bytes())
			}
			if n >= len(ids) || r.ID != ids[n] {
				t.Fatalf("response %d has id %d; the requests were %v", n, r.ID, ids)
			}
			if len(r.TimesNS) > transfer.MaxReps {
				t.Fatalf("response %d carries %d times, over MaxReps", n, len(r.TimesNS))
			}
			n++
		}
		if osc.Err() != nil {
			t.Fatalf("reading the responses: %v", osc.Err())
		}
	})
}
