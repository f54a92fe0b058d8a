package api

// Bulk export of costs (their import is internal/bulk's ImportCosts).

import (
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/money"
)

// costExportColumns are the fields of an exported cost (id is the upsert key).
var costExportColumns = []string{"id", "initiative_id", "name", "category", "amount", "currency", "period", "recurrence", "end_period"}

// exportCosts reads a page of the tenant's costs in (initiative, id) order,
// each as the cost resource shows it but with the amount unrounded (so it imports back unchanged).
func exportCosts(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkCostsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterInitiative, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkCostsExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		j := toCostJSON(r)
		out.records[i] = map[string]any{"id": j.ID, "initiative_id": j.InitiativeID, "name": j.Name, "category": j.Category,
			"amount": money.Stored(r.Amount), "currency": j.Currency, "period": j.Period, "recurrence": j.Recurrence, "end_period": j.EndPeriod}
		out.after = []any{r.InitiativeID, r.ID}
	}
	return out
}
