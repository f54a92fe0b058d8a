package money

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"
)

// The expected values are PostgreSQL's round(numeric, n) of the same
// literals (half away from zero), e.g. SELECT round(292.275, 2) = 292.28.
func TestAmountRoundsHalfAwayFromZeroToMinorUnits(t *testing.T) {
	cases := []struct {
		in, currency string
		want         float64
	}{
		{"292.275", "USD", 292.28}, // EUR 270.00 at 1.0825: float64 made it 292.27
		{"1.005", "EUR", 1.01},     // float64 made it 1.00
		{"2.675", "EUR", 2.68},
		{"-2.345", "EUR", -2.35},
		{"1234.565", "GBP", 1234.57},
		{"1.005", "BHD", 1.005}, // three minor units
		{"1.0005", "BHD", 1.001},
		{"1234.5", "JPY", 1235}, // none
		{"-1234.5", "JPY", -1235},
		{"0.125", "XAU", 0.13}, // no minor unit in ISO: two
		{"0.125", "", 0.13},
		{"-0.001", "EUR", 0},
		{"999999999999.995", "EUR", 1e12},
		{"6263.354", "USD", 6263.35},
	}
	for _, c := range cases {
		got := Amount(decimal.RequireFromString(c.in), c.currency)
		if got != c.want || math.Signbit(got) {
			if got != c.want || math.Signbit(got) != math.Signbit(c.want) {
				t.Errorf("Amount(%s, %q) = %v, want %v", c.in, c.currency, got, c.want)
			}
		}
	}
	if AmountPtr(nil, "EUR") != nil {
		t.Error("AmountPtr(nil) is not nil")
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{46.40287769784173, 46.4}, {-19.9049, -19.9}, {2.675, 2.68}, {-0.004, 0}, {12.345, 12.35},
	} {
		if got := Percent(c.in); got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("Percent(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := PercentOf(decimal.RequireFromString("-31.4449")); got != -31.44 {
		t.Errorf("PercentOf = %v", got)
	}
}

// Round returns what the library's Round does, whether or not the value has digits past places
// (without them it is returned as it is, in its own representation: the same value).
func TestRoundAgreesWithTheLibrary(t *testing.T) {
	for _, in := range []string{"36000", "36000.0000000000000000", "12.5", "-12.50", "0", "1.005", "-2.345", "1E+3", "1234.5678", "-0.001", "999999999999.995"} {
		v := decimal.RequireFromString(in)
		for _, places := range []int32{0, 2, 3, -2} {
			got, want := Round(v, places), v.Round(places)
			if !got.Equal(want) || got.String() != want.String() || got.StringFixed(places) != want.StringFixed(places) {
				t.Errorf("Round(%s, %d) = %s, the library's %s", in, places, got, want)
			}
		}
	}
}
