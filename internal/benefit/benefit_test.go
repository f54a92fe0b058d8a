package benefit

import (
	"errors"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/finance"

	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/validation"
)

// mi is the month of a year and month number.
func mi(year, month int) finance.Month { return finance.MonthOf(year, time.Month(month)) }

// fieldCodes flattens validation errors to field → code for comparison.
func fieldCodes(t *testing.T, err error) map[string]string {
	t.Helper()
	if err == nil {
		return map[string]string{}
	}
	out := map[string]string{}
	if es, ok := errors.AsType[validation.Errors](err); ok {
		for _, e := range es {
			out[e.Field] = e.Code
		}
		return out
	}
	if e, ok := errors.AsType[*validation.Error](err); ok {
		out[e.Field] = e.Code
		return out
	}
	t.Fatalf("not a validation error: %T %v", err, err)
	return nil
}

func TestEnums(t *testing.T) {
	for _, c := range Categories {
		if !c.Valid() {
			t.Errorf("%s should be valid", c)
		}
	}
	for _, bad := range []Category{"", "Revenue_Growth", "savings"} {
		if bad.Valid() {
			t.Errorf("category %q should be invalid", bad)
		}
	}
	if !Quarterly.Valid() || Frequency("weekly").Valid() || Frequency("").Valid() {
		t.Error("frequencies are monthly and quarterly only")
	}
	if Monthly.PeriodsPerYear() != 12 || Quarterly.PeriodsPerYear() != 4 {
		t.Error("periods per year: monthly 12, quarterly 4")
	}
	if !UnitFTE.Valid() || Unit("dollars").Valid() {
		t.Error("units")
	}
	if !Cancelled.Valid() || Status("deleted").Valid() {
		t.Error("statuses")
	}
	if len(Categories) != 7 || len(Units) != 7 || len(Statuses) != 3 {
		t.Error("the lists must match VALUE-DECISIONS")
	}
}

func TestCancelledBenefitsLeaveTheTotals(t *testing.T) {
	if !Active.CountsInTotals() || !Achieved.CountsInTotals() || Cancelled.CountsInTotals() {
		t.Error("only cancelled benefits are left out of totals")
	}
}

func TestCheckCanAdd(t *testing.T) {
	cases := []struct {
		count int
		want  error
	}{{0, nil}, {99, nil}, {100, ErrLimitReached}, {250, ErrLimitReached}}
	for _, c := range cases {
		if got := CheckCanAdd(c.count); !errors.Is(got, c.want) || (c.want == nil && got != nil) {
			t.Errorf("CheckCanAdd(%d) = %v, want %v", c.count, got, c.want)
		}
	}
}

func TestCheckWritable(t *testing.T) {
	for _, s := range initiative.Statuses {
		err := CheckWritable(s)
		if (s == initiative.Archived) != errors.Is(err, ErrInitiativeArchived) {
			t.Errorf("CheckWritable(%s) = %v", s, err)
		}
	}
}

func TestCheckRedefinition(t *testing.T) {
	stored := Basis{Unit: UnitCurrency, Currency: "EUR", Frequency: Monthly, Start: date(2026, 3, 15)}
	first := mi(2026, 4)
	cases := []struct {
		name   string
		change func(*Basis)
		first  *finance.Month
		locked bool
	}{
		{"no actuals: anything goes", func(b *Basis) { b.Unit, b.Currency, b.Frequency = UnitHours, "", Quarterly }, nil, false},
		{"unchanged", func(*Basis) {}, &first, false},
		{"start earlier", func(b *Basis) { b.Start = date(2025, 1, 1) }, &first, false},
		{"start later, up to the first actual's month", func(b *Basis) { b.Start = date(2026, 4, 30) }, &first, false},
		{"start past the first actual", func(b *Basis) { b.Start = date(2026, 5, 1) }, &first, true},
		{"unit", func(b *Basis) { b.Unit, b.Currency = UnitHours, "" }, &first, true},
		{"currency", func(b *Basis) { b.Currency = "USD" }, &first, true},
		{"frequency", func(b *Basis) { b.Frequency = Quarterly }, &first, true},
	}
	for _, c := range cases {
		next := stored
		c.change(&next)
		err := CheckRedefinition(stored, next, c.first)
		if errors.Is(err, ErrBasisLocked) != c.locked || (!c.locked && err != nil) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
