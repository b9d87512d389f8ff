package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crossbarSchedule is a valid schedule file that executes without a demand: one 1000-byte
// circuit 0→1 on a 2-port crossbar. Its hostile variants replace substrings of it.
const crossbarSchedule = `{"version":1,"algorithm":"hand","n":2,"ports":2,"fabric":"crossbar","mode":"partial",` +
	`"params":{"bandwidth_bytes_per_second":1e9,"reconfig_seconds":1e-6},` +
	`"circuits":[{"src":0,"dst":1,"bytes":1000,"group":0,"path":[],"planned_start":0,"planned_end":1e-6}]}`

const barrierSchedule = `{"version":1,"algorithm":"hand","n":2,"ports":2,"fabric":"crossbar","mode":"barrier",` +
	`"params":{"bandwidth_bytes_per_second":1e9,"reconfig_seconds":0},` +
	`"circuits":[{"src":0,"dst":1,"bytes":1000,"group":0,"path":[]}],"rounds":[{"group":0,"planned_duration":1e-6}]}`

func csvOf(rows [][]int64) string {
	var b strings.Builder
	for _, r := range rows {
		for j, v := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Every hostile input to the model-side commands is one clear line and exit 2 (or 1 where verify
// would call the file an invalid schedule); nothing wraps, runs out of memory or ends in an
// internal error. Each row is a reproduction from the hardening review.
func TestHostileInputsModelSide(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const m = 9223372036854775807
	e18 := int64(1e18)
	e50 := int64(1) << 50
	npyHeader := func(h string) string {
		b := append([]byte("\x93NUMPY\x02\x00"), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(h)))
		return string(append(b, h...))
	}
	sched := func(name, base string, pairs ...string) string {
		return file(name, strings.NewReplacer(pairs...).Replace(base))
	}
	dup := strings.Replace(crossbarSchedule, `"circuits":[`, `"circuits":[{"src":0,"dst":1,"bytes":1000,"group":0,"path":[]},`, 1)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"sums overflow int64 (trace show)", []string{"trace", "show", file("max.csv", csvOf([][]int64{{m, m, m}, {m, m, m}, {m, m, m}}))}, 2,
			"entry [0][0] = 9223372036854775807 brings the matrix total above the limit of 9007199254740992 bytes (2^53)"},
		{"1e18 and 1 with Sunflow", []string{"emulate", "--demand", file("e18.csv", csvOf([][]int64{{0, e18, 1, 1}, {1, 0, e18, 1}, {1, 1, 0, e18}, {e18, 1, 1, 0}})), "--algo", "sunflow"}, 2,
			"entry [0][1] = 1000000000000000000 brings the matrix total above the limit"},
		{"2^50 and 1, all algorithms at α_r = 10 ns", []string{"emulate", "--demand", file("e50.csv", csvOf([][]int64{{0, e50, 1, 1}, {1, 0, e50, 1}, {1, 1, 0, e50}, {e50, 1, 1, 0}})), "--algo", "all", "--reconfig", "10ns"}, 0, "sunflow"},
		{"2^50 and 1 at α_r = 0", []string{"emulate", "--demand", filepath.Join(dir, "e50.csv"), "--algo", "all", "--reconfig", "0"}, 0, "tetris"},
		{"drain time above the limit", []string{"schedule", "--demand", filepath.Join(dir, "e50.csv"), "--bandwidth", "1Gbps"}, 2, "above the limit of 1e+06 s"},
		{"α_r = 1e308", []string{"emulate", "--matrix", "0", "--reconfig", "1e308s"}, 2, `--reconfig "1e308s": α_r = 1e+308 s is above the limit of 1e+06 s`},
		{"Go literal 1_000", []string{"trace", "show", file("lit.csv", "0,1_000\n1,0\n")}, 2, `line 1, column 2: value "1_000" is not a number`},
		{"Go literal 0x1p4", []string{"trace", "show", file("hex.csv", "0,0x1p4\n1,0\n")}, 2, `value "0x1p4" is not a number`},
		{"3-column header over 2×2", []string{"trace", "show", file("hdr.csv", "a,b,c\n0,1\n1,0\n")}, 2, "line 1 is a header of 3 names over rows of 2 values"},
		{"a CSV line above the limit", []string{"trace", "show", "--max-ports", "2", file("long.csv", "0,"+strings.Repeat("1", 5000)+"\n")}, 2,
			"line 1 is longer than 4224 bytes, above the limit for a row of at most 2 values (64 bytes per value; raise it with --max-ports)"},
		{"a 100 KB .npy header", []string{"trace", "show", file("big.npy", npyHeader("{'descr': '<i8', "+strings.Repeat(" ", 100_000)+"}\n"))}, 2,
			"header is 100019 bytes, above the limit of 10000 bytes (NumPy's max_header_size)"},
		{"hidden × dtype overflow (import)", []string{"trace", "import", "--format", "routing-jsonl", "--gpus", "2", "--experts", "2", "--hidden", "4611686018427387904", "--dtype-bytes", "4",
			file("r.jsonl", `{"layer": 0, "experts": [1], "source": 0}`+"\n"), "-o", filepath.Join(dir, "r.json")}, 2, "hidden = 4611686018427387904 × dtype bytes = 4 per token copy is above the limit"},
		{"hidden × dtype overflow (gen)", []string{"trace", "gen", "--model", "custom", "--layers", "1", "--hidden", "4611686018427387904", "--dtype-bytes", "4", "-o", filepath.Join(dir, "g.json")}, 2,
			"hidden = 4611686018427387904 × dtype bytes = 4 × 8 GPUs × 2048 tokens × top-2 is above the limit"},
		{"JSON type error", []string{"trace", "show", file("type.json", `{"version": 1, "meta": {"gpus": "2"}, "matrices": []}`)}, 2, `line 1, column 36: field meta.gpus: value "2" is a JSON string, want an integer (int)`},
		{"schedule: trailing ]]]", []string{"emulate", "--schedule", file("trail.json", crossbarSchedule+"]]]")}, 2, "trailing data after the schedule object"},
		{"schedule: group 2^62", []string{"emulate", "--schedule", sched("g62.json", crossbarSchedule, `"group":0`, `"group":4611686018427387904`)}, 2, "field circuits[0].group: 4611686018427387904 is above the limit of 2147483647"},
		{"schedule: bytes MaxInt64", []string{"emulate", "--schedule", sched("bmax.json", crossbarSchedule, `"bytes":1000`, `"bytes":9223372036854775807`)}, 2, "field circuits[0].bytes: 9223372036854775807 is above the limit of 9007199254740992 bytes"},
		{"schedule: reconfig_seconds 1e308", []string{"emulate", "--schedule", sched("r308.json", crossbarSchedule, `"reconfig_seconds":1e-6`, `"reconfig_seconds":1e308`)}, 2, "field params.reconfig_seconds = 1e+308 s is above the limit of 1e+06 s"},
		{"schedule: planned_duration 1e308", []string{"emulate", "--schedule", sched("d308.json", barrierSchedule, `"planned_duration":1e-6`, `"planned_duration":1e308`)}, 2, "field rounds[0].planned_duration = 1e+308 s is above the limit"},
		{"schedule: crossbar n 2^40", []string{"emulate", "--schedule", sched("n40.json", crossbarSchedule, `"n":2`, `"n":1099511627776`, `"ports":2`, `"ports":4`)}, 2, "field n: 1099511627776 is above the limit of 1048576 ports on any fabric"},
		{"verify: crossbar n 2^40", []string{"verify", filepath.Join(dir, "n40.json"), "--demand", file("d4.csv", "0,1000,0,0\n0,0,0,0\n0,0,0,0\n0,0,0,0\n")}, 2, "field n: 1099511627776 is above the limit"},
		{"schedule: bytes as a string", []string{"emulate", "--schedule", sched("bstr.json", crossbarSchedule, `"bytes":1000`, `"bytes":"1000"`)}, 2, `field circuits.bytes: value "1000" is a JSON string, want an integer (int64)`},
		{"emulate --schedule: 0-byte circuit", []string{"emulate", "--schedule", sched("zero.json", crossbarSchedule, `"bytes":1000`, `"bytes":0`)}, 1, "endpoint: circuit 0: 0→1 carries 0 bytes"},
		{"emulate --schedule: end before start", []string{"emulate", "--schedule", sched("rev.json", crossbarSchedule, `"planned_start":0`, `"planned_start":1`)}, 1, "planned end 1e-06 is before planned start 1"},
		{"emulate --schedule: duplicate circuit", []string{"emulate", "--schedule", file("dup.json", dup)}, 1, "duplicate: circuit 1: 0→1 repeats circuit 0 in group 0"},
		{"verify: duplicate circuit", []string{"verify", filepath.Join(dir, "dup.json"), "--demand", file("d2.csv", "0,2000\n0,0\n")}, 1, "duplicate: circuit 1: 0→1 repeats circuit 0 in group 0"},
		{"schedule: bandwidth 1e-300", []string{"emulate", "--schedule", sched("bw.json", crossbarSchedule, `"bandwidth_bytes_per_second":1e9`, `"bandwidth_bytes_per_second":1e-300`)}, 2,
			"1000 bytes at 1e-300 bytes/s with 1 circuits × α_r = 1e-06 s may take 1e+303 s, above the limit of 1e+06 s"},
		{"schedule: --bandwidth 1bps", []string{"emulate", "--schedule", file("ok1.json", crossbarSchedule), "--bandwidth", "1bps"}, 0, " 8000  "}, // in the COMPLETION(s) column
		{"schedule: 2^53 bytes at 1bps", []string{"emulate", "--schedule", sched("b53.json", crossbarSchedule, `"bytes":1000`, `"bytes":9007199254740992`), "--bandwidth", "1bps"}, 2, "may take 7.21e+16 s, above the limit"},
		{"emulate --schedule: the valid file", []string{"emulate", "--schedule", file("ok.json", crossbarSchedule)}, 0, "hand"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code, err := cli(t, c.args...)
			msg := out
			if err != nil {
				msg += err.Error()
			}
			msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
			if code != c.code || !strings.Contains(msg, c.want) {
				t.Fatalf("exit %d, want %d; output and error:\n%s\nwant it to contain %q", code, c.code, msg, c.want)
			}
			if c.code == 2 && (strings.Count(err.Error(), "\n") > 0 || len(err.Error()) > 400) {
				t.Errorf("the error is not one short line: %q", err)
			}
			if err != nil {
				t.Logf("exit %d: %s", code, strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""))
			}
		})
	}
}
