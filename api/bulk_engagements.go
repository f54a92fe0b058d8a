package api

// Export of engagements (the import is bulk.ImportEngagements).

import (
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/stakeholder"
)

// engagementExportColumns are the fields of an exported engagement (id is the upsert key).
var engagementExportColumns = []string{"id", "stakeholder_id", "type", "date", "sentiment", "notes"}

// exportEngagements reads a page of the tenant's engagements in (stakeholder, id) order.
func exportEngagements(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkEngagementsExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterStakeholder, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkEngagementsExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		j := stakeholder.EngagementViewOf(r)
		out.records[i] = map[string]any{"id": j.ID, "stakeholder_id": j.StakeholderID, "type": j.Type, "date": j.Date,
			"sentiment": j.Sentiment, "notes": j.Notes}
		out.after = []any{r.StakeholderID, r.ID}
	}
	return out
}
