package codec

import (
	"bytes"
	"math"
	"testing"
)

// TestFloatEncodesLikeJSONStringify pins Float's JSON text to JavaScript's
// JSON.stringify: no exponent between 1e-6 and 1e21, an unpadded one
// outside, -0 as 0.
func TestFloatEncodesLikeJSONStringify(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{1, "1"},
		{1.5, "1.5"},
		{1e6, "1000000"},
		{2500000.5, "2500000.5"},
		{123456789012, "123456789012"},
		{0.000001, "0.000001"},
		{1e-7, "1e-7"},
		{1e21, "1e+21"},
		{-1.5e300, "-1.5e+300"},
		{math.Copysign(0, -1), "0"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if err := Float.EncodeTo(&buf, c.in); err != nil {
			t.Fatalf("Float encoding %v: %v", c.in, err)
		}
		if got := buf.String(); got != c.want {
			t.Errorf("Float encodes %v as %s, want %s", c.in, got, c.want)
		}
	}
}
