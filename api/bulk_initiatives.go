package api

// Export of initiatives (the import is bulk.ImportInitiatives).

import (
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// initiativeExportColumns are the fields of an exported initiative (id is read-only on import).
var initiativeExportColumns = []string{"id", "name", "description", "status", "industry", "segment", "owner_id",
	"expected_start_date", "expected_end_date"}

// exportInitiatives reads a page of the tenant's initiatives, archived included, in lower-case name order.
func exportInitiatives(cur bulkExportCursor) bulkExportPage {
	p := dbsqlc.BulkInitiativesExportParams{TenantID: cur.tenant, PageLimit: bulkExportPageSize}
	if cur.after != nil {
		p.AfterName = cur.after[0].(string)
	}
	rows, err := db.Q.BulkInitiativesExport(cur.ctx, cur.tx, p)
	out := bulkExportPage{err: err, records: make([]map[string]any, len(rows))}
	for i, r := range rows {
		out.records[i] = map[string]any{"id": r.ID.String(), "name": r.Name, "description": r.Description, "status": r.Status,
			"industry": r.Industry, "segment": r.Segment, "owner_id": r.OwnerID,
			"expected_start_date": optDate(r.ExpectedStartDate), "expected_end_date": optDate(r.ExpectedEndDate)}
		out.after = []any{r.NameKey}
	}
	return out
}
