package api

// Bulk export of benefits (their import is internal/bulk's ImportBenefits).

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// benefitExportColumns are the fields of an exported benefit (id is read-only on import).
var benefitExportColumns = []string{"id", "initiative_id", "name", "description", "category", "expected_value", "currency", "unit",
	"measurement_frequency", "expected_start_date", "expected_end_date", "status", "owner_id", "plan", "external_key"}

// exportBenefits reads a page of the tenant's benefits in (initiative, id) order, each with its plan.
func exportBenefits(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkBenefitsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterInitiative, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkBenefitsExport(cur.ctx, cur.tx, p)
	if err != nil {
		return bulkExportPage{err: err}
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.Benefit.ID
	}
	entries, err := db.Q.BenefitPlanList(cur.ctx, cur.tx, dbsqlc.BenefitPlanListParams{TenantID: cur.tenant, BenefitIds: ids})
	plans := map[uuid.UUID][]dbsqlc.BenefitPlanEntry{}
	for _, e := range entries {
		plans[e.BenefitID] = append(plans[e.BenefitID], e)
	}
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		j := toBenefitJSON(r.Benefit, plans[r.Benefit.ID]) // the single route's representation of the plan
		var plan any
		if j.Plan != nil {
			raw, err := json.Marshal(j.Plan)
			if err != nil {
				return bulkExportPage{err: err}
			}
			plan = json.RawMessage(raw)
		}
		out.records[i] = map[string]any{"id": j.ID, "initiative_id": j.InitiativeID, "name": j.Name, "description": j.Description,
			"category": j.Category, "expected_value": j.ExpectedValue, "currency": j.Currency, "unit": j.Unit,
			"measurement_frequency": j.MeasurementFrequency, "expected_start_date": j.ExpectedStartDate, "expected_end_date": j.ExpectedEndDate,
			"status": j.Status, "owner_id": j.OwnerID, "plan": plan, "external_key": j.ExternalKey}
		out.after = []any{r.Benefit.InitiativeID, r.Benefit.ID}
	}
	return out
}
