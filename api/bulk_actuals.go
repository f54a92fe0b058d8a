package api

// Bulk export of actuals (their import is internal/bulk's ImportActuals).

import (
	"time"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
)

// actualExportColumns are the fields of an exported actual (id is read-only on import).
var actualExportColumns = []string{"id", "benefit_id", "period", "value", "notes", "evidence_url"}

// exportActuals reads a page of the tenant's actuals in (benefit, period) order.
func exportActuals(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkActualsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterBenefit, p.AfterPeriod = cur.after[0].(uuid.UUID), cur.after[1].(time.Time)
	}
	rows, err := db.Q.BulkActualsExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		out.records[i] = map[string]any{"id": r.ID.String(), "benefit_id": r.BenefitID.String(),
			"period": finance.MonthOfTime(r.Period).String(), "value": money.Stored(r.Value), "notes": r.Notes, "evidence_url": r.EvidenceUrl}
		out.after = []any{r.BenefitID, r.Period}
	}
	return out
}
