// Package jsonw holds the rules by which encoding/json writes numbers, for the encoders that
// write large files piece by piece (schedule files, run records, Chrome traces) and must give
// exactly the bytes json.Marshal would: one copy of those rules, so the encoders cannot drift
// apart.
package jsonw

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// AppendFloat appends f as encoding/json writes a float64: the shortest decimal that reads back
// exactly, in plain notation unless it is below 1e-6 or from 1e21 on, where the exponent form is
// used with no leading zero in the exponent (1e-7, not 1e-07). f must be finite (CheckFloat).
func AppendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// CheckFloat returns the error json.Marshal gives for a float64 it cannot encode (NaN, ±Inf),
// or nil.
func CheckFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	return nil
}
