package money

import (
	"math"
	"testing"
)

func TestRound(t *testing.T) {
	cases := []struct{ in, want float64 }{
		{1234.564, 1234.56},
		{1234.565, 1234.57}, // 1234.565 × 100 is exactly 123456.5: half away from zero
		{-2.345, -2.35},     // -2.345 × 100 = -234.50000000000003: away from zero
		{46.40287769784173, 46.4},
		{-0.001, 0},
		{0, 0},
		{1e12, 1e12},
	}
	for _, c := range cases {
		got := Round(c.in)
		if got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("Round(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
