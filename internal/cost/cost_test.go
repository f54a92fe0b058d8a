package cost

import (
	"errors"
	"math"
	"testing"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/validation"
)

func TestCheckDefinition(t *testing.T) {
	good := Definition{Category: Capex, Amount: 50_000, Currency: "EUR", Period: "2026-03", Recurrence: finance.Once}
	with := func(f func(*Definition)) Definition { d := good; f(&d); return d }
	type failure struct{ field, code string }
	cases := []struct {
		name string
		def  Definition
		want []failure // nil: accepted
	}{
		{"once", good, nil},
		{"smallest positive amount", with(func(d *Definition) { d.Amount = 0.01 }), nil},
		{"largest amount", with(func(d *Definition) { d.Amount = MaxAmount }), nil},
		{"monthly open-ended", with(func(d *Definition) { d.Recurrence = finance.Monthly }), nil},
		{"quarterly ending off its grid", with(func(d *Definition) { d.Recurrence = finance.Quarterly; d.EndPeriod = new("2026-05") }), nil},
		{"annual ending in its first month", with(func(d *Definition) { d.Recurrence = finance.Annual; d.EndPeriod = new("2026-03") }), nil},
		{"first and last input periods", with(func(d *Definition) {
			d.Recurrence = finance.Monthly
			d.Period = "2000-01"
			d.EndPeriod = new("2099-12")
		}), nil},

		{"unknown category", with(func(d *Definition) { d.Category = "hardware" }), []failure{{"category", validation.CodeInvalidValue}}},
		{"no category", with(func(d *Definition) { d.Category = "" }), []failure{{"category", validation.CodeRequired}}},
		{"unknown recurrence", with(func(d *Definition) { d.Recurrence = "weekly" }), []failure{{"recurrence", validation.CodeInvalidValue}}},
		{"zero amount", with(func(d *Definition) { d.Amount = 0 }), []failure{{"amount", validation.CodeOutOfRange}}},
		{"negative amount", with(func(d *Definition) { d.Amount = -10 }), []failure{{"amount", validation.CodeOutOfRange}}},
		{"amount over 1e12", with(func(d *Definition) { d.Amount = 1.000001e12 }), []failure{{"amount", validation.CodeOutOfRange}}},
		{"NaN amount", with(func(d *Definition) { d.Amount = math.NaN() }), []failure{{"amount", validation.CodeOutOfRange}}},
		{"infinite amount", with(func(d *Definition) { d.Amount = math.Inf(1) }), []failure{{"amount", validation.CodeOutOfRange}}},
		{"withdrawn currency", with(func(d *Definition) { d.Currency = "DEM" }), []failure{{"currency", validation.CodeInvalidValue}}},
		{"lower-case currency", with(func(d *Definition) { d.Currency = "eur" }), []failure{{"currency", validation.CodeInvalidValue}}},
		{"no currency", with(func(d *Definition) { d.Currency = "" }), []failure{{"currency", validation.CodeRequired}}},
		{"no period", with(func(d *Definition) { d.Period = "" }), []failure{{"period", validation.CodeRequired}}},
		{"month 13", with(func(d *Definition) { d.Period = "2026-13" }), []failure{{"period", validation.CodeInvalidFormat}}},
		{"a date, not a period", with(func(d *Definition) { d.Period = "2026-03-01" }), []failure{{"period", validation.CodeInvalidFormat}}},
		{"year typed short", with(func(d *Definition) { d.Period = "0026-03" }), []failure{{"period", validation.CodeOutOfRange}}},
		{"after 2099", with(func(d *Definition) { d.Period = "2100-01" }), []failure{{"period", validation.CodeOutOfRange}}},
		{"once with an end", with(func(d *Definition) { d.EndPeriod = new("2026-12") }), []failure{{"end_period", validation.CodeNotAllowed}}},
		{"end before start", with(func(d *Definition) { d.Recurrence = finance.Monthly; d.EndPeriod = new("2026-02") }), []failure{{"end_period", validation.CodeInvalidRange}}},
		{"malformed end", with(func(d *Definition) { d.Recurrence = finance.Monthly; d.EndPeriod = new("2026-3") }), []failure{{"end_period", validation.CodeInvalidFormat}}},
		{"every failure at once", Definition{Category: "x", Amount: -1, Currency: "usd", Period: "soon", Recurrence: "daily", EndPeriod: new("later")},
			[]failure{{"category", validation.CodeInvalidValue}, {"recurrence", validation.CodeInvalidValue}, {"amount", validation.CodeOutOfRange},
				{"currency", validation.CodeInvalidValue}, {"period", validation.CodeInvalidFormat}, {"end_period", validation.CodeInvalidFormat}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CheckDefinition(c.def)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if want, _ := finance.ParseMonth(c.def.Period); got.Period != want {
					t.Errorf("period = %v, want %v", got.Period, want)
				}
				if (got.End == nil) != (c.def.EndPeriod == nil) || (got.End != nil && got.End.String() != *c.def.EndPeriod) {
					t.Errorf("end = %v, want %v", got.End, c.def.EndPeriod)
				}
				return
			}
			errs, ok := errors.AsType[validation.Errors](err)
			if !ok || len(errs) != len(c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			for i, w := range c.want {
				if errs[i].Field != w.field || errs[i].Code != w.code {
					t.Errorf("failure %d = %s/%s (%s), want %s/%s", i, errs[i].Field, errs[i].Code, errs[i].Message, w.field, w.code)
				}
			}
		})
	}
}

func TestLimitsAndArchived(t *testing.T) {
	if CheckCanAdd(MaxPerInitiative-1) != nil {
		t.Error("the 500th cost must be allowed")
	}
	if !errors.Is(CheckCanAdd(MaxPerInitiative), ErrLimitReached) {
		t.Error("the 501st cost must be refused")
	}
	for _, s := range initiative.Statuses {
		err := CheckWritable(s)
		if (s == initiative.Archived) != errors.Is(err, ErrInitiativeArchived) {
			t.Errorf("CheckWritable(%s) = %v", s, err)
		}
	}
}
