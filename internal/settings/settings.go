// Package settings holds a tenant's organisation settings that every money
// figure depends on: the base currency, the discount rate and the fiscal
// year, and the FX rates quoted against the base currency. It validates what
// a client submits and saves it with the rule that ties the two together: a
// new base currency clears the stored rates in the same transaction.
package settings

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
)

// Settings of one tenant.
type Settings struct {
	BaseCurrency         string
	DiscountRate         float64 // annual, 0..1
	FiscalYearStartMonth int     // 1..12: fiscal year Y begins in this month of calendar year Y
}

// Defaults apply until a tenant saves its own settings.
var Defaults = Settings{BaseCurrency: "USD", DiscountRate: 0.08, FiscalYearStartMonth: 1}

// Record is the settings with the time they were last saved; UpdatedAt is
// nil while the defaults apply.
type Record struct {
	Settings
	UpdatedAt *time.Time
}

// Load returns the tenant's settings, or the defaults when it has saved none.
func Load(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID) (Settings, error) {
	r, err := LoadRecord(ctx, tx, tenantID)
	return r.Settings, err
}

// LoadRecord is Load with the time of the last save.
func LoadRecord(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID) (Record, error) {
	row, err := db.Q.SettingsGet(ctx, tx, tenantID)
	if db.IsNotFound(err) {
		return Record{Settings: Defaults}, nil
	}
	if err != nil {
		return Record{}, err
	}
	return recordOf(row), nil
}

// LoadForUpdate is LoadRecord under the tenant's settings lock, held to the
// end of the transaction (Save takes it again; advisory locks stack), so a
// precondition on the record holds to the write.
func LoadForUpdate(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID) (Record, error) {
	if err := db.Q.SettingsLock(ctx, tx, tenantID); err != nil {
		return Record{}, err
	}
	return LoadRecord(ctx, tx, tenantID)
}

func recordOf(row dbsqlc.TenantSetting) Record {
	return Record{
		Settings:  Settings{BaseCurrency: row.BaseCurrency, DiscountRate: row.DiscountRate.InexactFloat64(), FiscalYearStartMonth: int(row.FiscalYearStartMonth)},
		UpdatedAt: &row.UpdatedAt,
	}
}

// Check reports every field of s that is out of bounds (validation.Errors):
// base_currency an active ISO 4217 code, discount_rate a number in [0, 1],
// fiscal_year_start_month 1..12.
func Check(s Settings) error {
	var errs validation.Errors
	errs.Append(money.CheckCode("base_currency", s.BaseCurrency))
	if math.IsNaN(s.DiscountRate) || s.DiscountRate < 0 || s.DiscountRate > 1 {
		errs.Add("discount_rate", validation.CodeOutOfRange, "must be from 0 to 1 (an annual rate: 0.08 is 8 %%)")
	}
	if s.FiscalYearStartMonth < 1 || s.FiscalYearStartMonth > 12 {
		errs.Add("fiscal_year_start_month", validation.CodeOutOfRange, "must be a month number from 1 to 12")
	}
	return errs.Err()
}

// Save checks s and stores it as the tenant's settings. When the base
// currency changes, the stored FX rates are deleted in the same transaction
// (they were quoted against the old base and would convert wrongly); cleared
// says so. Saving serialises with SaveRates per tenant.
func Save(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID, s Settings) (saved Record, cleared bool, err error) {
	if err := Check(s); err != nil {
		return Record{}, false, err
	}
	if err := db.Q.SettingsLock(ctx, tx, tenantID); err != nil {
		return Record{}, false, err
	}
	before, err := Load(ctx, tx, tenantID)
	if err != nil {
		return Record{}, false, err
	}
	row, err := db.Q.SettingsUpsert(ctx, tx, dbsqlc.SettingsUpsertParams{
		TenantID: tenantID, BaseCurrency: s.BaseCurrency, DiscountRate: decimal.NewFromFloat(s.DiscountRate), FiscalYearStartMonth: int32(s.FiscalYearStartMonth),
	})
	if err != nil {
		return Record{}, false, err
	}
	if before.BaseCurrency != s.BaseCurrency {
		if err := db.Q.FxRatesDeleteAll(ctx, tx, tenantID); err != nil {
			return Record{}, false, err
		}
		cleared = true
	}
	return recordOf(row), cleared, nil
}

// MaxRatesPerRequest bounds one PUT of FX rates (ten years of 80 currencies).
const MaxRatesPerRequest = 10_000

// RateInput is one FX rate as submitted.
type RateInput struct {
	Currency string
	Period   string // YYYY-MM
	Rate     float64
}

// Rate is a checked FX rate: base-currency units per 1 unit of Currency in
// Period, exactly the decimal submitted (1.0825 is 1.0825, not its float64).
type Rate struct {
	Currency string
	Period   finance.Month
	Rate     decimal.Decimal
}

// CheckRates reports every entry that breaks a rule (fields rates[i].currency,
// rates[i].period, rates[i].rate) and returns the checked rates: at least one
// and at most MaxRatesPerRequest entries; currency active ISO 4217 and not the
// base (its rate is 1 by definition); period as finance.CheckInputPeriod; rate > 0 and ≤ finance.MaxRate; one entry per
// (currency, period).
func CheckRates(base string, in []RateInput) ([]Rate, error) {
	var errs validation.Errors
	switch {
	case len(in) == 0:
		return nil, validation.New("rates", validation.CodeRequired, "must list at least one rate")
	case len(in) > MaxRatesPerRequest:
		return nil, validation.New("rates", validation.CodeTooMany, "must have at most %d entries (got %d)", MaxRatesPerRequest, len(in))
	}
	type key struct {
		currency string
		period   finance.Month
	}
	seen := make(map[key]int, len(in))
	out := make([]Rate, 0, len(in))
	for i, r := range in {
		field := "rates[" + strconv.Itoa(i) + "]"
		curErr := finance.CheckRateCurrency(field+".currency", r.Currency, base)
		period, periodErr := finance.CheckInputPeriod(field+".period", r.Period)
		errs.Append(curErr)
		errs.Append(periodErr)
		errs.Append(finance.CheckRate(field+".rate", r.Rate))
		if curErr != nil || periodErr != nil || finance.CheckRate("", r.Rate) != nil {
			continue
		}
		k := key{r.Currency, period}
		if j, dup := seen[k]; dup {
			errs.Add(field+".period", validation.CodeDuplicate, "%s %s is already given by rates[%d]", r.Currency, period, j)
			continue
		}
		seen[k] = i
		out = append(out, Rate{Currency: r.Currency, Period: period, Rate: decimal.NewFromFloat(r.Rate)})
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// SaveRates checks the rates against the tenant's base currency and upserts
// them: a (currency, period) already stored takes the new rate, others stay.
// It returns the base currency they are quoted against.
func SaveRates(ctx context.Context, tx dbsqlc.DBTX, tenantID uuid.UUID, in []RateInput) (base string, rates []Rate, err error) {
	if err := db.Q.SettingsLock(ctx, tx, tenantID); err != nil {
		return "", nil, err
	}
	s, err := Load(ctx, tx, tenantID)
	if err != nil {
		return "", nil, err
	}
	if rates, err = CheckRates(s.BaseCurrency, in); err != nil {
		return "", nil, err
	}
	p := dbsqlc.FxRatesUpsertParams{
		TenantID: tenantID, Currencies: make([]string, len(rates)), Periods: make([]time.Time, len(rates)), Rates: make([]decimal.Decimal, len(rates)),
	}
	for i, r := range rates {
		p.Currencies[i], p.Periods[i], p.Rates[i] = r.Currency, r.Period.FirstDay(), r.Rate
	}
	if err := db.Q.FxRatesUpsert(ctx, tx, p); err != nil {
		return "", nil, err
	}
	return s.BaseCurrency, rates, nil
}
