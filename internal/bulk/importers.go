package bulk

// Importers are the importers of every resource: the API answers small
// imports with them and the worker runs jobs with them.
func Importers() map[Resource]Importer {
	return map[Resource]Importer{
		Actuals: ImportActuals, Benefits: ImportBenefits, Costs: ImportCosts,
		Initiatives: ImportInitiatives, Stakeholders: ImportStakeholders, Engagements: ImportEngagements,
	}
}

// ConflictError fails a whole import: rows that each pass their checks
// collide with one another in a way only the database sees (the API answers 409).
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }
