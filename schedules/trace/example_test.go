package trace_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

func ExampleImportRouting() {
	// Two GPUs, experts 0-1 on GPU 0 and 2-3 on GPU 1; a routing is 4 elements × 2 bytes.
	jsonl := `{"layer": 0, "token_idx": 0, "experts": [0, 2]}
{"layer": 0, "token_idx": 1, "experts": [3, 1]}
`
	tr, err := trace.ImportRouting(strings.NewReader(jsonl), "r.jsonl", trace.RoutingOptions{
		GPUs: 2, Experts: 4, Hidden: 4, DtypeBytes: 2, Placement: trace.Contiguous(4, 2)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range tr.Matrices {
		fmt.Println(m.Label(), m.Bytes)
	}
	// Output:
	// layer 0 dispatch [[8 8] [8 8]]
	// layer 0 combine [[8 8] [8 8]]
}

func ExampleRead() {
	in := `{"version": 1, "meta": {"gpus": 2}, "matrices": [
  {"layer": 3, "phase": "dispatch", "bytes": [[0, 1.5], [2, 0]]}]}`
	_, err := trace.Read(strings.NewReader(in), "t.json", 0)
	fmt.Println(err)
	// Output: t.json: matrices[0].bytes[0][1]: value 1.5 is not a whole number of bytes
}

func ExampleTrace_Write() {
	tr, _ := trace.FromMatrices([][][]int64{{{0, 7}, {3, 0}}}, trace.LayoutLayers, "hand")
	tr.Write(os.Stdout)
	// Output:
	// {
	//   "version": 1,
	//   "meta": {
	//     "gpus": 2,
	//     "source": "hand"
	//   },
	//   "matrices": [
	//     {"layer": 0, "phase": "dispatch", "bytes": [
	//       [0, 7],
	//       [3, 0]
	//     ]}
	//   ]
	// }
}
