package finance

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

func mi(year, month int) Month { return MonthOf(year, time.Month(month)) }

func TestRatesFeedFX(t *testing.T) {
	r := NewRates("USD")
	must(t, r.Set("EUR", mi(2026, 1), d(1.08)))
	must(t, r.Set("EUR", mi(2026, 2), d(1.10)))
	must(t, r.Set("JPY", mi(2026, 1), d(0.0065)))
	fx := r.FX()
	if fx.Base != "USD" {
		t.Fatalf("FX base = %q", fx.Base)
	}

	cases := []struct {
		name   string
		amount float64
		from   string
		month  Month
		want   float64
		ok     bool
	}{
		// hand-computed: amount × rate of that month
		{"EUR January", 1000, "EUR", mi(2026, 1), 1080, true},
		{"EUR February uses February's rate", 1000, "EUR", mi(2026, 2), 1100, true},
		{"JPY", 2_000_000, "JPY", mi(2026, 1), 13000, true},
		{"negative amounts convert too", -500, "EUR", mi(2026, 1), -540, true},
		{"base currency needs no rate", 123.45, "USD", mi(1999, 1), 123.45, true},
		{"no EUR rate for March", 1000, "EUR", mi(2026, 3), 0, false},
		{"a rate of another month is not used", 1000, "JPY", mi(2026, 2), 0, false},
		{"unknown currency", 1, "GBP", mi(2026, 1), 0, false},
	}
	for _, c := range cases {
		got, ok := fx.Convert(c.from, c.month, d(c.amount))
		if ok != c.ok || !got.Equal(d(c.want)) {
			t.Errorf("%s: Convert(%v, %s) = %v, %v; want %v, %v", c.name, c.amount, c.from, got, ok, c.want, c.ok)
		}
	}
}

// A mixed-currency figure built through the finance core adds only what it
// could convert and lists each missing (currency, month) once.
func TestRatesInCashFlowsListMissingRatesOnce(t *testing.T) {
	r := NewRates("EUR")
	must(t, r.Set("USD", mi(2026, 1), d(0.92)))
	h := Horizon{Start: mi(2026, 1), End: mi(2026, 2)}
	costs := []Cost{
		{Amount: d(100), Currency: "EUR", Recurrence: Once, Period: mi(2026, 1)},
		{Amount: d(100), Currency: "USD", Recurrence: Monthly, Period: mi(2026, 1)}, // 92, then missing in 02
		{Amount: d(100), Currency: "USD", Recurrence: Once, Period: mi(2026, 2)},    // missing again: listed once
		{Amount: d(100), Currency: "GBP", Recurrence: Once, Period: mi(2026, 1)},    // missing
	}
	cf, missing := BuildCashFlows(h, nil, costs, BasisExpected, r.FX())
	if got := cf.TotalCosts(); !got.Equal(d(192)) {
		t.Errorf("converted part = %v, want 192 (100 EUR + 100 USD × 0.92)", got)
	}
	want := []MissingRate{{Currency: "GBP", Period: mi(2026, 1)}, {Currency: "USD", Period: mi(2026, 2)}}
	if !slices.Equal(missing, want) {
		t.Errorf("missing = %v, want %v", missing, want)
	}
}

func TestSetRefusesBadRates(t *testing.T) {
	r := NewRates("USD")
	cases := []struct {
		cur   string
		rate  float64
		field string
		code  string
	}{
		{"USD", 1, "currency", validation.CodeNotAllowed},
		{"DEM", 0.5, "currency", validation.CodeInvalidValue},
		{"eur", 1.1, "currency", validation.CodeInvalidValue},
		{"EUR", 0, "rate", validation.CodeOutOfRange},
		{"EUR", -1.1, "rate", validation.CodeOutOfRange},
		{"EUR", MaxRate * 10, "rate", validation.CodeOutOfRange},
	}
	for _, c := range cases {
		err := r.Set(c.cur, mi(2026, 1), d(c.rate))
		ve, ok := errors.AsType[*validation.Error](err)
		if !ok || ve.Field != c.field || ve.Code != c.code {
			t.Errorf("Set(%s, %v) = %v; want %s on %s", c.cur, c.rate, err, c.code, c.field)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), 0, MaxRate * 10} {
		if ve, ok := errors.AsType[*validation.Error](CheckRate("rate", bad)); !ok || ve.Code != validation.CodeOutOfRange {
			t.Errorf("CheckRate(%v) = %v", bad, ve)
		}
	}
	if _, ok := r.Rate("EUR", mi(2026, 1)); ok {
		t.Error("a refused rate must not be stored")
	}
	must(t, r.Set("EUR", mi(2026, 1), d(MaxRate)))
	if got, ok := r.Rate("EUR", mi(2026, 1)); !ok || !got.Equal(d(MaxRate)) {
		t.Errorf("Rate after Set = %v, %v", got, ok)
	}
}
