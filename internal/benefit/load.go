package benefit

import (
	"context"
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
	Plan    []dbsqlc.BenefitPlanEntry // the benefit's plan entries, oldest first (none: the even spread)
	Query   VarianceQuery             // the query asked, with the tenant's fiscal year start
	Actuals []dbsqlc.BenefitActual    // the benefit's actuals in the fiscal year's periods, oldest first
}

// ReadVariance reads benefit id of the tenant for a variance report over q
// at now, in tx, in two round trips: the benefit, the tenant's settings and
// the benefit's plan (Read's statements) as one pipelined batch (db.Pipeline: none needs
// another's result), then its actuals in the fiscal year, which the benefit's
// frequency and the settings' fiscal year start bound. A benefit the tenant
// does not have is pgx.ErrNoRows (db.IsNotFound); a parameter of q the report
// cannot use is a *ParamError.
func ReadVariance(ctx context.Context, tx pgx.Tx, tenantID, id uuid.UUID, q VarianceQuery, now time.Time) (VarianceRows, error) {
	var r VarianceRows
	var set settings.Settings
	err := db.Pipeline(ctx, tx,
		getStep(ctx, tenantID, id, &r.Benefit),
		func(dq dbsqlc.DBTX) (err error) {
			set, err = settings.Load(ctx, dq, tenantID)
			return err
		},
		planStep(ctx, tenantID, id, &r.Plan))
	if err != nil {
		return VarianceRows{}, err
	}
	r.Query = q
	r.Query.FYStartMonth = set.FiscalYearStartMonth
	f := Frequency(r.Benefit.MeasurementFrequency)
	year, err := VarianceWindow(f, r.Query, nil, now) // the parameters and the year's months, before reading actuals
	if err != nil {
		return VarianceRows{}, err
	}
	r.Actuals, err = db.Q.ActualListInRange(ctx, tx, dbsqlc.ActualListInRangeParams{TenantID: tenantID, BenefitID: id,
		FromPeriod: Normalise(f, year.FirstMonth).FirstDay(), ToPeriod: year.LastMonth.FirstDay()})
	if err != nil {
		return VarianceRows{}, err
	}
	return r, nil
}

// ActualPeriods are the periods of rows' actuals, in their order.
func (r VarianceRows) ActualPeriods() []finance.Month {
	out := make([]finance.Month, len(r.Actuals))
	for i, a := range r.Actuals {
		out[i] = finance.MonthOfTime(a.Period)
	}
	return out
}
