package benefit

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
)

// Read reads benefit id of the tenant with its plan entries (oldest first;
// none: the even spread) in tx, in one round trip (db.Pipeline). A benefit
// the tenant does not have is pgx.ErrNoRows (db.IsNotFound).
func Read(ctx context.Context, tx db.Batcher, tenantID, id uuid.UUID) (dbsqlc.Benefit, []dbsqlc.BenefitPlanEntry, error) {
	var b dbsqlc.Benefit
	var plan []dbsqlc.BenefitPlanEntry
	if err := db.Pipeline(ctx, tx, getStep(ctx, tenantID, id, &b), planStep(ctx, tenantID, id, &plan)); err != nil {
		return dbsqlc.Benefit{}, nil, err
	}
	return b, plan, nil
}

// getStep reads benefit id into out.
func getStep(ctx context.Context, tenantID, id uuid.UUID, out *dbsqlc.Benefit) db.Step {
	return func(q dbsqlc.DBTX) (err error) {
		*out, err = db.Q.BenefitGet(ctx, q, dbsqlc.BenefitGetParams{TenantID: tenantID, ID: id})
		return err
	}
}

// planStep reads benefit id's plan entries into out, oldest first.
func planStep(ctx context.Context, tenantID, id uuid.UUID, out *[]dbsqlc.BenefitPlanEntry) db.Step {
	return func(q dbsqlc.DBTX) (err error) {
		*out, err = db.Q.BenefitPlanList(ctx, q, dbsqlc.BenefitPlanListParams{TenantID: tenantID, BenefitIds: []uuid.UUID{id}})
		return err
	}
}

// VarianceRows are the stored rows a benefit's variance report is computed
// from (GET /v1/benefits/{id}/variance).
type VarianceRows struct {
	Benefit dbsqlc.Benefit
	Plan    []dbsqlc.BenefitPlanEntry       // the benefit's plan entries, oldest first (none: the even spread)
	Query   VarianceQuery                   // the query asked, with the tenant's fiscal year start
	Actuals []dbsqlc.ActualValuesInRangeRow // the benefit's actuals in the fiscal year's periods, oldest first
}

// ReadVariance reads benefit id of the tenant for a variance report over q
// at now, in tx, in one round trip (db.Pipeline): the benefit, the tenant's
// settings, the benefit's plan (Read's statements) and its actuals in the
// widest range the fiscal year can cover whatever the benefit's frequency and
// the tenant's fiscal year start (VarianceActualsBound), of which it keeps those in
// the year's periods. A benefit the tenant does not have is pgx.ErrNoRows
// (db.IsNotFound); a parameter of q the report cannot take is a *ParamError.
func ReadVariance(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID, q VarianceQuery, now time.Time) (VarianceRows, error) {
	var r VarianceRows
	var set settings.Settings
	steps := []db.Step{
		getStep(ctx, tenantID, id, &r.Benefit),
		func(dq dbsqlc.DBTX) (err error) {
			set, err = settings.Load(ctx, dq, tenantID)
			return err
		},
		planStep(ctx, tenantID, id, &r.Plan),
	}
	from, to, bounded := VarianceActualsBound(q, now)
	if bounded { // otherwise the year is out of range: VarianceWindow says so below
		steps = append(steps, func(dq dbsqlc.DBTX) (err error) {
			r.Actuals, err = db.Q.ActualValuesInRange(ctx, dq, dbsqlc.ActualValuesInRangeParams{TenantID: tenantID, BenefitID: id,
				FromPeriod: from.FirstDay(), ToPeriod: to.FirstDay()})
			return err
		})
	}
	if err := db.Pipeline(ctx, tx, steps...); err != nil {
		return VarianceRows{}, err
	}
	r.Query = q
	r.Query.FYStartMonth = set.FiscalYearStartMonth
	f := Frequency(r.Benefit.MeasurementFrequency)
	year, err := VarianceWindow(f, r.Query, nil, now) // the parameters and the year's months
	if err != nil {
		return VarianceRows{}, err
	}
	first, last := Normalise(f, year.FirstMonth), year.LastMonth
	r.Actuals = slices.DeleteFunc(r.Actuals, func(a dbsqlc.ActualValuesInRangeRow) bool {
		p := finance.MonthOfTime(a.Period)
		return p < first || p > last
	})
	return r, nil
}

// VarianceActualsBound is the range of actual periods that holds the year's periods
// of q at now for every frequency and fiscal year start (the union of
// Normalise(f, first) .. last over them): the actuals can then be read before
// the benefit and the settings are known. Not bounded when q's year is out of
// range.
func VarianceActualsBound(q VarianceQuery, now time.Time) (from, to finance.Month, bounded bool) {
	nowMonth := finance.MonthOfTime(now)
	from, to = math.MaxInt, math.MinInt
	for start := 1; start <= 12; start++ {
		year := q.FiscalYear
		if year == 0 {
			year = finance.FiscalYear(nowMonth, start)
		}
		if year < 1 || year > 9999 {
			return 0, 0, false
		}
		first, last := finance.FiscalYearRange(year, start)
		for _, f := range Frequencies {
			from = min(from, Normalise(f, first))
		}
		to = max(to, last)
	}
	return max(from, finance.MonthOf(1, time.January)), to, true
}

// ActualPeriods are the periods of rows' actuals, in their order.
func (r VarianceRows) ActualPeriods() []finance.Month {
	out := make([]finance.Month, len(r.Actuals))
	for i, a := range r.Actuals {
		out[i] = finance.MonthOfTime(a.Period)
	}
	return out
}
