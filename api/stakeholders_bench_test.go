package api

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/auth"
	"github.com/valuecase/valuecase/internal/stakeholder"
	"github.com/valuecase/valuecase/internal/validation"
)

// BenchmarkStakeholderList measures a full page of the list (an initiative's
// 500 stakeholders, each with three engagements, every derived field
// computed) through the whole app, against the same SQL in a tenant
// transaction in the same run (the baseline), unfiltered and with at_risk.
//
//	go test ./api/ -run '^$' -bench StakeholderList -benchmem
func BenchmarkStakeholderList(b *testing.B) {
	app := newBenchApp(b)
	ctx, pool, tenant, keys, s := app.ctx, app.pool, app.tenant, app.keys, app.server

	today := time.Now().UTC().Truncate(24 * time.Hour)
	sentiments := []string{"positive", "neutral", "cautious", "negative"}
	influences := validation.Names(stakeholder.Influences)
	var initiativeID uuid.UUID
	err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
		in, err := db.Q.InitiativeCreate(ctx, tx, dbsqlc.InitiativeCreateParams{TenantID: tenant, Name: "Bench"})
		if err != nil {
			return err
		}
		initiativeID = in.ID
		for i := range stakeholder.MaxPerInitiative {
			row, err := db.Q.StakeholderCreate(ctx, tx, dbsqlc.StakeholderCreateParams{TenantID: tenant, InitiativeID: in.ID, Name: fmt.Sprintf("Stakeholder %03d", i),
				Email: fmt.Sprintf("s%d@example.com", i), Influence: influences[i%4], Interest: []string{"low", "medium", "high"}[i%3]})
			if err != nil {
				return err
			}
			for j := range 3 {
				if _, err := db.Q.EngagementCreate(ctx, tx, dbsqlc.EngagementCreateParams{TenantID: tenant, StakeholderID: row.ID, Type: "meeting",
					Date: today.AddDate(0, 0, -(i%90)-10*j), Sentiment: sentiments[(i+j)%4], RecordedBy: "bench"}); err != nil {
					return err
				}
			}
			refreshed, err := db.Q.StakeholdersRefreshEngagementSummary(ctx, tx, dbsqlc.StakeholdersRefreshEngagementSummaryParams{TenantID: tenant, Ids: []uuid.UUID{row.ID}})
			if err != nil {
				return err
			}
			row = refreshed[0]
			if _, err := db.Q.StakeholderSetAtRiskFrom(ctx, tx, dbsqlc.StakeholderSetAtRiskFromParams{TenantID: tenant, ID: row.ID,
				AtRiskFrom: stakeholder.AtRiskFrom(stakeholder.Influence(row.Influence), stakeholder.StoredEngagements(row).Engagements(), row.CreatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := keys.Mint(auth.MintOptions{Subject: "bench", TenantID: tenant.String(), Permissions: []string{"stakeholders:read"}, TTL: time.Hour})
	handler := s.App().Handler()

	for _, c := range []struct {
		name   string
		query  string
		atRisk *bool
	}{{"all", "", nil}, {"at_risk", "&at_risk=true", new(true)}} {
		var want int
		b.Run(c.name+"/sql_baseline", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := db.InTenant(ctx, pool, tenant, func(tx pgx.Tx) error {
					rows, err := db.Q.StakeholderList(ctx, tx, dbsqlc.StakeholderListParams{TenantID: tenant, InitiativeID: &initiativeID, AtRisk: c.atRisk,
						Today: today, Sort: "created_at", SortDesc: true, PageLimit: 500})
					want = len(rows)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/api", func(b *testing.B) {
			var req fasthttp.Request
			req.SetRequestURI("/v1/stakeholders?page_size=500&initiative_id=" + initiativeID.String() + c.query)
			req.Header.SetMethod("GET")
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("X-Tenant-ID", tenant.String())
			var rc fasthttp.RequestCtx
			b.ReportAllocs()
			for b.Loop() {
				rc.Init(&req, nil, nil)
				handler(&rc)
				if st := rc.Response.StatusCode(); st != 200 {
					b.Fatalf("status %d: %s", st, rc.Response.Body())
				}
			}
			b.ReportMetric(float64(want), "rows")
		})
	}
}
