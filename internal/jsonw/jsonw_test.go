package jsonw

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestAppendFloatMatchesMarshal: every finite float64, drawn as raw bits (subnormals, −0, the
// 1e-6 and 1e21 edges), is written exactly as json.Marshal writes it.
func TestAppendFloatMatchesMarshal(t *testing.T) {
	edges := []float64{0, math.Copysign(0, -1), 1e-6, math.Nextafter(1e-6, 0), 1e21, math.Nextafter(1e21, 0),
		-1e21, 5e-324, math.MaxFloat64, -math.MaxFloat64, 1e-7, 123456789, 0.1}
	for _, f := range edges {
		want, _ := json.Marshal(f)
		if got := AppendFloat(nil, f); string(got) != string(want) {
			t.Errorf("AppendFloat(%g) = %s, json.Marshal %s", f, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		f := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		prefix := []byte(`x`)
		if got := AppendFloat(prefix, f); string(got) != "x"+string(want) {
			t.Fatalf("AppendFloat(%v) = %s, json.Marshal %s", f, got, want)
		}
	})
}

// TestCheckFloatMatchesMarshal: NaN and ±Inf get json.Marshal's own error; finite floats none.
func TestCheckFloatMatchesMarshal(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1.5} {
		_, want := json.Marshal(f)
		got := CheckFloat(f)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() || got != nil && reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("CheckFloat(%v) = %v, json.Marshal %v", f, got, want)
		}
	}
}
