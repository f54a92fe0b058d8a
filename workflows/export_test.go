package workflows

// The schedule upsert's parts, for the external tests that act between its description and
// its update (as an operator in the Temporal UI may).
var (
	UpsertSchedule = upsertSchedule
	UpdateSchedule = updateSchedule
	ScheduleUpdate = scheduleUpdate
)
