package bulk

import (
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
)

// Importers are the importers of every resource: the API answers small
// imports with them and the worker runs jobs with them.
func Importers() map[Resource]Importer {
	out := map[Resource]Importer{Actuals: ImportActuals, Benefits: ImportBenefits, Costs: ImportCosts}
	for r, imp := range stillInAPI {
		out[r] = imp
	}
	return out
}

// stillInAPI holds the importers that have not moved here from the HTTP
// package yet (initiatives, stakeholders, engagements): api registers them
// with RegisterFromAPI until they join the map of Importers, and then both go.
var stillInAPI = map[Resource]Importer{}

// RegisterFromAPI adds an importer the HTTP package still holds.
func RegisterFromAPI(r Resource, imp Importer) { stillInAPI[r] = imp }

// ConflictError fails a whole import: rows that each pass their checks
// collide with one another in a way only the database sees (the API answers 409).
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// noneIfBlank stores a blank optional text as null.
func noneIfBlank(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	return new(strings.TrimSpace(*s))
}

// firstDay is the date a month is stored as (its first day); nil stays nil.
func firstDay(m *finance.Month) *time.Time {
	if m == nil {
		return nil
	}
	return new(m.FirstDay())
}
