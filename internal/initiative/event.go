package initiative

// StatusChangedEvent is the data of an initiative.status_changed event: the
// API writes it to the outbox, the review workflow's outbox handler reads it.
type StatusChangedEvent struct {
	InitiativeID string `json:"initiative_id"`
	FromStatus   Status `json:"from_status"`
	ToStatus     Status `json:"to_status"`
	Reason       string `json:"reason"`
	Actor        string `json:"actor"`
	ChangedAt    string `json:"changed_at"`
	// Initiative is the initiative after the change, as the API shows it.
	Initiative any `json:"initiative"`
}
