package schedules

import (
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	good := []struct {
		name, in string
		want     [][]int64
	}{
		{"commas", "0,1\n2,0\n", [][]int64{{0, 1}, {2, 0}}},
		{"whitespace and header", "gpu0 gpu1\n0 1\n\n2\t0\n", [][]int64{{0, 1}, {2, 0}}},
		{"numpy floats", "0.000000000000000000e+00,1.5e+01\n2.0,0\n", [][]int64{{0, 15}, {2, 0}}},
		{"comment", "# bytes\n0,7\n7,0", [][]int64{{0, 7}, {7, 0}}},
	}
	for _, c := range good {
		d, err := ReadCSV(strings.NewReader(c.in), "m.csv", 0)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i := range c.want {
			for j := range c.want[i] {
				if d.Bytes[i][j] != c.want[i][j] {
					t.Errorf("%s: [%d][%d] = %d, want %d", c.name, i, j, d.Bytes[i][j], c.want[i][j])
				}
			}
		}
	}
	bad := []struct{ name, in, msg string }{
		{"empty", "", "n = 0"},
		{"ragged", "0,1\n2\n", "line 2 has 1 values"},
		{"not square", "0,1\n", "1×2, not square"},
		{"negative", "0,-1\n1,0\n", `line 1, column 2: value "-1" is negative`},
		{"fraction", "0,1.5\n1,0\n", "not a whole number"},
		{"nan", "0,NaN\n1,0\n", "NaN"},
		{"inf", "0,Inf\n1,0\n", "out of range"},
		{"garbage", "0,1\n1,x\n", `line 2, column 2: value "x" is not a number`},
		{"too big", "0,0,0\n0,0,0\n0,0,0\n", "limit of 2 ports"},
		{"underflow", "0,1e-400\n1,0\n", "not a whole number"},
		{"bad cell in the first row is not a header", "0,x1\n0,1\n1,0\n", `line 1, column 2: value "x1" is not a number`},
		{"empty field", "1,,2\n1,2,3\n1,2,3\n", "line 1: column 2 is empty"},
		{"hex", "0,0x10\n1,0\n", `value "0x10" is not a number`},
	}
	for _, c := range bad {
		_, err := ReadCSV(strings.NewReader(c.in), "m.csv", map[bool]int{true: 2, false: 0}[c.name == "too big"])
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "m.csv") {
			t.Errorf("%s: error %v, want one naming m.csv and containing %q", c.name, err, c.msg)
		}
	}
}
