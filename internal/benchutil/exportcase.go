package benchutil

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/valuecase/valuecase/db"
)

// The large case of the export benchmark and crash test: 100
// monthly benefits with 24 months of actuals each, 500 stakeholders, 12
// cost lines and 5 projects on one initiative.
const (
	LargeCaseBenefits     = 100
	LargeCaseActualMonths = 24
	LargeCaseStakeholders = 500
	LargeCaseCosts        = 12
	LargeCaseProjects     = 5
)

// SeedLargeValueModel fills an existing initiative with the large case's
// value model in one tenant transaction, with set-based SQL (seeding 2,400
// actuals through the API would take longer than what is measured). The
// rows are what the API would store: the benefits start 24 months before
// now's month and run 36 months, each with an actual in each of the 24
// months through last month; stakeholders spread over every influence and
// interest level with one to three recent sentiments.
func SeedLargeValueModel(ctx context.Context, pool *pgxpool.Pool, tenantID, initiativeID uuid.UUID, owner string, now time.Time) error {
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -LargeCaseActualMonths, 0)
	return db.InTenant(ctx, pool, tenantID, func(tx pgx.Tx) error {
		stmts := []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO benefits (tenant_id, initiative_id, name, category, expected_value, currency, unit, measurement_frequency,
			        expected_start_date, expected_end_date, owner_id)
			  SELECT $1, $2, format('Benefit %s – Zürich/Łódź stream', i),
			         (ARRAY['revenue_growth','cost_savings','cost_avoidance','productivity','risk_reduction'])[1 + i % 5],
			         12000 + 600 * i, 'USD', 'currency', 'monthly', $3::date, ($3::date + interval '35 months')::date, $4
			  FROM generate_series(1, $5::int) AS i`,
				[]any{tenantID, initiativeID, first, owner, LargeCaseBenefits}},
			{`INSERT INTO benefit_actuals (tenant_id, benefit_id, period, value, recorded_by)
			  SELECT b.tenant_id, b.id, (b.expected_start_date + make_interval(months => m))::date,
			         round((b.expected_value / 12 * (0.7 + 0.02 * m + 0.05 * sin(m)))::numeric, 2), $3
			  FROM benefits b, generate_series(0, $2::int - 1) AS m
			  WHERE b.tenant_id = $1 AND b.initiative_id = $4`,
				[]any{tenantID, LargeCaseActualMonths, owner, initiativeID}},
			{`INSERT INTO initiative_costs (tenant_id, initiative_id, name, category, amount, currency, period, recurrence, end_period)
			  SELECT $1, $2, format('Cost line %s', i), CASE WHEN i % 3 = 0 THEN 'capex' ELSE 'opex' END,
			         CASE WHEN i % 3 = 0 THEN 150000 + 10000 * i ELSE 4000 + 500 * i END, 'USD', $3::date,
			         CASE WHEN i % 3 = 0 THEN 'once' ELSE 'monthly' END,
			         CASE WHEN i % 3 = 0 THEN NULL ELSE ($3::date + interval '35 months')::date END
			  FROM generate_series(1, $4::int) AS i`,
				[]any{tenantID, initiativeID, first, LargeCaseCosts}},
			{`INSERT INTO stakeholders (tenant_id, initiative_id, name, email, role, department, influence, interest,
			        engagement_count, last_engagement_on, recent_sentiments)
			  SELECT $1, $2, format('Stakeholder %s Żółć', i), format('s%s@example.com', i), format('Role %s', i % 17), 'Finance',
			         (ARRAY['low','medium','high','critical'])[1 + i % 4], (ARRAY['low','medium','high'])[1 + i % 3],
			         1 + i % 3, $3::date - (i % 90),
			         (ARRAY['positive','neutral','cautious','negative','neutral','positive'])[1 + i % 4 : 1 + i % 4 + i % 3]
			  FROM generate_series(1, $4::int) AS i`,
				[]any{tenantID, initiativeID, now, LargeCaseStakeholders}},
			{`INSERT INTO projects (tenant_id, initiative_id, name, description)
			  SELECT $1, $2, format('Project %s', i), 'Workstream of the large benchmark case.'
			  FROM generate_series(1, $3::int) AS i`,
				[]any{tenantID, initiativeID, LargeCaseProjects}},
		}
		for i, s := range stmts {
			if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
				return fmt.Errorf("large case, statement %d: %w", i+1, err)
			}
		}
		return nil
	})
}

// LargeCaseSections fills every section of a business case, a few
// paragraphs each, for the large case.
func LargeCaseSections() (ids []string, content map[string]any) {
	content = map[string]any{}
	for _, id := range []string{"executive_summary", "financial_analysis", "risk_assessment", "implementation_roadmap",
		"stakeholder_map", "benefits_plan", "assumptions"} {
		ids = append(ids, id)
		body := ""
		for p := 1; p <= 4; p++ {
			body += fmt.Sprintf("Paragraph %d of %s: the shared-service hub in Łódź takes over accounts payable from Zürich in three waves; "+
				"each wave is gated on the previous one's error rate and close calendar.\n\n- A bullet with a figure: USD 1.2m a year.\n\n", p, id)
		}
		content[id] = map[string]any{"title": "Section " + id, "body": body}
	}
	return ids, content
}
