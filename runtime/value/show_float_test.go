package value

import (
	"math"
	"testing"
)

// TestShowFloatLikeJavaScript pins String.fromFloat to JavaScript's
// Number#toString, which Elm uses: plain digits from 1e-6 up to 1e21, an
// unpadded exponent outside that range.
func TestShowFloatLikeJavaScript(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{1.0, "1"},
		{-0.5, "-0.5"},
		{math.Copysign(0, -1), "0"},
		{0.000001, "0.000001"},
		{1e-7, "1e-7"},
		{-1.5e-7, "-1.5e-7"},
		{1e21, "1e+21"},
		{1.5e300, "1.5e+300"},
		{123456789012, "123456789012"},
	}
	for _, c := range cases {
		if got := ShowFloat(c.in); got != c.want {
			t.Errorf("ShowFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
