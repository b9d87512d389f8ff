package main

import (
	"strings"
	"testing"
)

// TestRNBMappingFlag: earliest is the default and is recorded in the schedule; every strategy is
// accepted; an unknown one exits 2 naming the flag and the value.
func TestRNBMappingFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, `"rnb_mapping": "earliest"`},
		{[]string{"--rnb-mapping", "earliest"}, `"rnb_mapping": "earliest"`},
		{[]string{"--rnb-mapping", "looping"}, `"rnb_mapping": "looping"`},
		{[]string{"--rnb-mapping", "avoid-live"}, `"rnb_mapping": "avoid-live"`},
	} {
		out := mustCLI(t, append([]string{"schedule", "--algo", "sunflow", "--matrix", "0"}, c.args...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("%v: schedule lacks %s", c.args, c.want)
		}
	}
	out, code, err := cli(t, "schedule", "--algo", "bff", "--matrix", "0", "--rnb-mapping", "greedy")
	if code != 2 || err == nil || !strings.Contains(err.Error(), `--rnb-mapping "greedy"`) {
		t.Errorf("unknown mapping: exit %d, error %v, output %q", code, err, out)
	}
}
