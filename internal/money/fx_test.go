package money

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/validation"
)

func mi(year, month int) finance.Month { return finance.MonthOf(year, time.Month(month)) }

func TestRatesFeedFX(t *testing.T) {
	r := NewRates("USD")
	must(t, r.Set("EUR", mi(2026, 1), 1.08))
	must(t, r.Set("EUR", mi(2026, 2), 1.10))
	must(t, r.Set("JPY", mi(2026, 1), 0.0065))
	fx := r.FX()
	if fx.Base != "USD" {
		t.Fatalf("FX base = %q", fx.Base)
	}

	cases := []struct {
		name   string
		amount float64
		from   string
		month  finance.Month
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
		got, ok := fx.Convert(c.from, c.month, c.amount)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: Convert(%v, %s) = %v, %v; want %v, %v", c.name, c.amount, c.from, got, ok, c.want, c.ok)
		}
	}
}

// A mixed-currency figure built through the finance core adds only what it
// could convert and lists each missing (currency, month) once.
func TestRatesInCashFlowsListMissingRatesOnce(t *testing.T) {
	r := NewRates("EUR")
	must(t, r.Set("USD", mi(2026, 1), 0.92))
	h := finance.Horizon{Start: mi(2026, 1), End: mi(2026, 2)}
	costs := []finance.Cost{
		{Amount: 100, Currency: "EUR", Recurrence: finance.Once, Period: mi(2026, 1)},
		{Amount: 100, Currency: "USD", Recurrence: finance.Monthly, Period: mi(2026, 1)}, // 92, then missing in 02
		{Amount: 100, Currency: "USD", Recurrence: finance.Once, Period: mi(2026, 2)},    // missing again: listed once
		{Amount: 100, Currency: "GBP", Recurrence: finance.Once, Period: mi(2026, 1)},    // missing
	}
	cf, missing := finance.BuildCashFlows(h, nil, costs, finance.BasisExpected, r.FX())
	if got := cf.TotalCosts(); math.Abs(got-192) > 1e-9 {
		t.Errorf("converted part = %v, want 192 (100 EUR + 100 USD × 0.92)", got)
	}
	want := []finance.MissingRate{{Currency: "GBP", Period: mi(2026, 1)}, {Currency: "USD", Period: mi(2026, 2)}}
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
		{"EUR", math.NaN(), "rate", validation.CodeOutOfRange},
		{"EUR", math.Inf(1), "rate", validation.CodeOutOfRange},
		{"EUR", MaxRate * 10, "rate", validation.CodeOutOfRange},
	}
	for _, c := range cases {
		err := r.Set(c.cur, mi(2026, 1), c.rate)
		ve, ok := errors.AsType[*validation.Error](err)
		if !ok || ve.Field != c.field || ve.Code != c.code {
			t.Errorf("Set(%s, %v) = %v; want %s on %s", c.cur, c.rate, err, c.code, c.field)
		}
	}
	if _, ok := r.Rate("EUR", mi(2026, 1)); ok {
		t.Error("a refused rate must not be stored")
	}
	must(t, r.Set("EUR", mi(2026, 1), MaxRate))
	if got, ok := r.Rate("EUR", mi(2026, 1)); !ok || got != MaxRate {
		t.Errorf("Rate after Set = %v, %v", got, ok)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
