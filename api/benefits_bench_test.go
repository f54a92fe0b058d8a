package api

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
)

// BenchmarkBenefitVariance is the bench's GET /v1/benefits/{id}/variance run
// in-process (a monthly benefit with 60 actuals through last month), beside
// GET /v1/benefits/{id} (the same prologue and one query: the fixed part of
// a request) and the variance's SQL alone in a tenant transaction, for a
// profile of the service's share.
//
//	go test ./api/ -run '^$' -bench BenefitVariance -benchmem -cpuprofile cpu.out
func BenchmarkBenefitVariance(b *testing.B) {
	app := newBenchApp(b)
	ctx, pool, tenant, keys, s := app.ctx, app.pool, app.tenant, app.keys, app.server
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month()-60, 1, 0, 0, 0, 0, time.UTC)
	var benefit dbsqlc.Benefit
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "Variance bench"})
		if err != nil {
			return err
		}
		currency := "USD"
		if benefit, err = db.Q.BenefitCreate(ctx, tx, dbsqlc.BenefitCreateParams{TenantID: tenant, InitiativeID: in.ID, Name: "Savings", Category: "cost_savings",
			Unit: "currency", Currency: &currency, MeasurementFrequency: "monthly", ExpectedValue: decimal.NewFromInt(120000), ExpectedStartDate: first, Status: "active", OwnerID: "bench"}); err != nil {
			return err
		}
		for i := range 60 {
			if _, err := db.Q.ActualCreate(ctx, tx, dbsqlc.ActualCreateParams{TenantID: tenant, BenefitID: benefit.ID, Period: first.AddDate(0, i, 0),
				Value: decimal.NewFromInt(int64(9000 + 50*i)), RecordedBy: "bench"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := keys.Mint(auth.MintOptions{Subject: "bench", TenantID: tenant.String(), Permissions: []string{"benefits:read"}, TTL: time.Hour})
	handler := s.App().Handler()
	for _, c := range []struct{ name, uri string }{
		{"variance", "/v1/benefits/" + benefit.ID.String() + "/variance"},
		{"get_benefit", "/v1/benefits/" + benefit.ID.String()},
	} {
		benchRequest(b, c.name, c.uri, tok, tenant.String(), handler)
	}
	b.Run("variance/sql_baseline", func(b *testing.B) {
		b.ReportAllocs()
		yearStart := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		sub := "bench"
		for b.Loop() {
			err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
				if _, err := db.Q.UserAuthenticate(ctx, tx, dbsqlc.UserAuthenticateParams{TenantID: tenant, Subject: &sub, TokenRoles: []string{}}); err != nil && !db.IsNotFound(err) {
					return err
				}
				if _, err := db.Q.BenefitGet(ctx, tx, dbsqlc.BenefitGetParams{TenantID: tenant, ID: benefit.ID}); err != nil {
					return err
				}
				if _, err := db.Q.SettingsGet(ctx, tx, tenant); err != nil && !db.IsNotFound(err) {
					return err
				}
				if _, err := db.Q.BenefitPlanList(ctx, tx, dbsqlc.BenefitPlanListParams{TenantID: tenant, BenefitIds: []uuid.UUID{benefit.ID}}); err != nil {
					return err
				}
				_, err := db.Q.ActualValuesInRange(ctx, tx, dbsqlc.ActualValuesInRangeParams{TenantID: tenant, BenefitID: benefit.ID, FromPeriod: yearStart, ToPeriod: yearStart.AddDate(0, 11, 0)})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
