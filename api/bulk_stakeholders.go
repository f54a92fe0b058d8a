package api

// Export of stakeholders (the import is bulk.ImportStakeholders).

import (
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// stakeholderExportColumns are the fields of an exported stakeholder (id is read-only on import).
var stakeholderExportColumns = []string{"id", "initiative_id", "name", "email", "role", "department", "influence", "interest", "notes"}

// exportStakeholders reads a page of the tenant's stakeholders in (initiative, id) order.
func exportStakeholders(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkStakeholdersExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterInitiative, p.AfterID = cur.after[0].(uuid.UUID), cur.after[1].(uuid.UUID)
	}
	rows, err := db.Q.BulkStakeholdersExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		out.records[i] = map[string]any{"id": r.ID.String(), "initiative_id": r.InitiativeID.String(), "name": r.Name, "email": r.Email,
			"role": r.Role, "department": r.Department, "influence": r.Influence, "interest": r.Interest, "notes": r.Notes}
		out.after = []any{r.InitiativeID, r.ID}
	}
	return out
}
