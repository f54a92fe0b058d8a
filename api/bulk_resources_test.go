package api

import (
	"testing"

	"github.com/valuecase/valuecase/internal/bulk"
)

// TestBulkEveryResourceBuilt: each value of the resource enum has its importer,
// exporter, permissions and export columns, so no resource reaches a handler unbuilt.
func TestBulkEveryResourceBuilt(t *testing.T) {
	importers := bulk.Importers()
	for _, r := range bulk.Resources {
		br := bulkResources[r]
		if importers[r] == nil || bulkExporters[r] == nil || br.read == "" || br.write == "" || len(br.export) == 0 {
			t.Errorf("%s: importer %v, exporter %v, read %q, write %q, export columns %v",
				r, importers[r] != nil, bulkExporters[r] != nil, br.read, br.write, br.export)
		}
	}
}
