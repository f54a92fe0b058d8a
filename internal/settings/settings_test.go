package settings_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/validation"
)

// A tenant without saved settings gets the defaults; a saved row is read back
// as saved, and only for its own tenant.
func TestLoad(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	a, b := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")

	var got settings.Settings
	err := db.InTenant(ctx, pool, a, func(tx pgx.Tx) (err error) {
		got, err = settings.Load(ctx, tx, a)
		return err
	})
	if err != nil || got != settings.Defaults {
		t.Fatalf("defaults: got %+v, %v; want %+v", got, err, settings.Defaults)
	}

	err = db.InTenant(ctx, pool, a, func(tx pgx.Tx) error {
		_, err := db.Q.SettingsUpsert(ctx, tx, dbsqlc.SettingsUpsertParams{TenantID: a, BaseCurrency: "EUR", DiscountRate: decimal.RequireFromString("0.1"), FiscalYearStartMonth: 4})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := settings.Settings{BaseCurrency: "EUR", DiscountRate: 0.1, FiscalYearStartMonth: 4}
	for _, c := range []struct {
		tenant uuid.UUID
		want   settings.Settings
	}{{a, want}, {b, settings.Defaults}} {
		err := db.InTenant(ctx, pool, c.tenant, func(tx pgx.Tx) (err error) {
			got, err = settings.Load(ctx, tx, c.tenant)
			return err
		})
		if err != nil || got != c.want {
			t.Errorf("tenant %s: got %+v, %v; want %+v", c.tenant, got, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		s      settings.Settings
		fields []string // the fields refused, in order
	}{
		{"defaults", settings.Defaults, nil},
		{"bounds", settings.Settings{BaseCurrency: "JPY", DiscountRate: 1, FiscalYearStartMonth: 12}, nil},
		{"zero rate", settings.Settings{BaseCurrency: "EUR", DiscountRate: 0, FiscalYearStartMonth: 1}, nil},
		{"withdrawn currency", settings.Settings{BaseCurrency: "DEM", DiscountRate: 0.08, FiscalYearStartMonth: 1}, []string{"base_currency"}},
		{"negative rate", settings.Settings{BaseCurrency: "USD", DiscountRate: -0.01, FiscalYearStartMonth: 1}, []string{"discount_rate"}},
		{"rate as percent", settings.Settings{BaseCurrency: "USD", DiscountRate: 8, FiscalYearStartMonth: 1}, []string{"discount_rate"}},
		{"NaN rate", settings.Settings{BaseCurrency: "USD", DiscountRate: math.NaN(), FiscalYearStartMonth: 1}, []string{"discount_rate"}},
		{"month 0 and 13", settings.Settings{BaseCurrency: "usd", DiscountRate: 0.1, FiscalYearStartMonth: 13}, []string{"base_currency", "fiscal_year_start_month"}},
	}
	for _, c := range cases {
		err := settings.Check(c.s)
		errs, _ := errors.AsType[validation.Errors](err)
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
		}
		if !slices.Equal(got, c.fields) || (err == nil) != (c.fields == nil) {
			t.Errorf("%s: Check = %v, want failures on %v", c.name, err, c.fields)
		}
	}
}

func TestCheckRates(t *testing.T) {
	ok, err := settings.CheckRates("USD", []settings.RateInput{{"EUR", "2026-01", 1.08}, {"EUR", "2026-02", 1.1}, {"GBP", "2026-01", 1.27}})
	if err != nil || len(ok) != 3 || ok[1].Period != finance.MonthOf(2026, 2) || ok[2].Currency != "GBP" {
		t.Fatalf("good rates: %v, %v", ok, err)
	}
	type failure struct{ field, code string }
	cases := []struct {
		name string
		in   []settings.RateInput
		want []failure
	}{
		{"none", nil, []failure{{"rates", validation.CodeRequired}}},
		{"too many", make([]settings.RateInput, settings.MaxRatesPerRequest+1), []failure{{"rates", validation.CodeTooMany}}},
		{"the base currency", []settings.RateInput{{"USD", "2026-01", 1}}, []failure{{"rates[0].currency", validation.CodeNotAllowed}}},
		{"unknown currency and bad period", []settings.RateInput{{"EUR", "2026-01", 1.1}, {"XYZ", "2026-1", 1}},
			[]failure{{"rates[1].currency", validation.CodeInvalidValue}, {"rates[1].period", validation.CodeInvalidFormat}}},
		{"zero, negative and huge rates", []settings.RateInput{{"EUR", "2026-01", 0}, {"EUR", "2026-02", -1}, {"EUR", "2026-03", 2e12}},
			[]failure{{"rates[0].rate", validation.CodeOutOfRange}, {"rates[1].rate", validation.CodeOutOfRange}, {"rates[2].rate", validation.CodeOutOfRange}}},
		{"a month twice", []settings.RateInput{{"EUR", "2026-01", 1.1}, {"GBP", "2026-01", 1.2}, {"EUR", "2026-01", 1.2}},
			[]failure{{"rates[2].period", validation.CodeDuplicate}}},
		{"before 2000", []settings.RateInput{{"EUR", "1999-12", 1.1}}, []failure{{"rates[0].period", validation.CodeOutOfRange}}},
	}
	for _, c := range cases {
		_, err := settings.CheckRates("USD", c.in)
		var got []failure
		if e, ok := errors.AsType[*validation.Error](err); ok {
			got = append(got, failure{e.Field, e.Code})
		}
		for _, e := range func() validation.Errors { es, _ := errors.AsType[validation.Errors](err); return es }() {
			got = append(got, failure{e.Field, e.Code})
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

// Saving settings with a new base currency deletes the rates quoted against
// the old one in the same transaction; saving with the same base keeps them.
// Rates of one tenant never reach another.
func TestSaveClearsRatesOnlyWhenTheBaseChanges(t *testing.T) {
	pool := dbtest.NewPool(t)
	ctx := context.Background()
	a, b := dbtest.NewTenant(t, pool, "starter"), dbtest.NewTenant(t, pool, "starter")
	in := func(tenant uuid.UUID, fn func(tx pgx.Tx) error) {
		t.Helper()
		if err := db.InTenant(ctx, pool, tenant, fn); err != nil {
			t.Fatal(err)
		}
	}
	rateCount := func(tenant uuid.UUID) (n int) {
		in(tenant, func(tx pgx.Tx) error {
			rows, err := db.Q.FxRateList(ctx, tx, dbsqlc.FxRateListParams{TenantID: tenant})
			n = len(rows)
			return err
		})
		return n
	}
	for _, tenant := range []uuid.UUID{a, b} {
		in(tenant, func(tx pgx.Tx) error {
			base, saved, err := settings.SaveRates(ctx, tx, tenant, []settings.RateInput{{"EUR", "2026-01", 1.08}, {"EUR", "2026-02", 1.1}})
			if base != "USD" || len(saved) != 2 {
				t.Errorf("SaveRates = %s, %v", base, saved)
			}
			return err
		})
	}
	// Upsert: one rate corrected, one added.
	in(a, func(tx pgx.Tx) error {
		_, _, err := settings.SaveRates(ctx, tx, a, []settings.RateInput{{"EUR", "2026-02", 1.12}, {"GBP", "2026-02", 1.27}})
		return err
	})
	in(a, func(tx pgx.Tx) error {
		rows, err := db.Q.FxRateList(ctx, tx, dbsqlc.FxRateListParams{TenantID: a, Currency: new("EUR")})
		if len(rows) != 2 || rows[1].Rate.String() != "1.12" {
			t.Errorf("after the upsert: %+v", rows)
		}
		return err
	})
	// The base currency's own rate is refused, and nothing is written.
	err := db.InTenant(ctx, pool, a, func(tx pgx.Tx) error {
		_, _, err := settings.SaveRates(ctx, tx, a, []settings.RateInput{{"USD", "2026-01", 1}})
		return err
	})
	if _, ok := errors.AsType[validation.Errors](err); !ok {
		t.Fatalf("a rate for the base currency: %v", err)
	}

	in(a, func(tx pgx.Tx) error {
		saved, cleared, err := settings.Save(ctx, tx, a, settings.Settings{BaseCurrency: "USD", DiscountRate: 0.1, FiscalYearStartMonth: 4})
		if cleared || saved.UpdatedAt == nil || saved.DiscountRate != 0.1 {
			t.Errorf("same base: cleared %v, saved %+v", cleared, saved)
		}
		return err
	})
	if n := rateCount(a); n != 3 {
		t.Fatalf("the same base currency kept %d rates, want 3", n)
	}
	in(a, func(tx pgx.Tx) error {
		_, cleared, err := settings.Save(ctx, tx, a, settings.Settings{BaseCurrency: "EUR", DiscountRate: 0.1, FiscalYearStartMonth: 4})
		if !cleared {
			t.Error("a new base currency must report the rates cleared")
		}
		return err
	})
	if n := rateCount(a); n != 0 {
		t.Fatalf("a new base currency left %d rates", n)
	}
	if n := rateCount(b); n != 2 {
		t.Fatalf("tenant b has %d rates after tenant a changed its base, want its own 2", n)
	}
	// Now EUR is the base: a EUR rate is refused, a USD one accepted.
	in(a, func(tx pgx.Tx) error {
		base, _, err := settings.SaveRates(ctx, tx, a, []settings.RateInput{{"USD", "2026-01", 0.93}})
		if base != "EUR" {
			t.Errorf("base = %s", base)
		}
		return err
	})
	// Invalid settings are refused before anything is written.
	err = db.InTenant(ctx, pool, a, func(tx pgx.Tx) error {
		_, _, err := settings.Save(ctx, tx, a, settings.Settings{BaseCurrency: "GBP", DiscountRate: 2, FiscalYearStartMonth: 1})
		return err
	})
	if _, ok := errors.AsType[validation.Errors](err); !ok {
		t.Fatalf("bad settings: %v", err)
	}
	if n := rateCount(a); n != 1 {
		t.Fatalf("refused settings changed the rates: %d", n)
	}
}
