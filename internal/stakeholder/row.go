package stakeholder

import (
	"time"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db/dbsqlc"
)

// Entry is one stakeholder as an initiative's detail lists it: who, with the
// summary of its engagements (grid quadrant, latest sentiment, risk).
type Entry struct {
	ID           uuid.UUID
	Name         string
	Role         *string
	Influence    Influence
	Interest     Interest
	Quadrant     Quadrant
	Sentiment    *Sentiment // of the latest engagement; nil when never engaged
	AtRisk       bool
	AtRiskReason *RiskReason
}

// EntryOf summarises a stored stakeholder at now from the engagement columns
// its row keeps (SummariseStored, as the stakeholder resource does).
func EntryOf(s dbsqlc.Stakeholder, now time.Time) Entry {
	influence, interest := Influence(s.Influence), Interest(s.Interest)
	sum := SummariseStored(influence, interest, StoredEngagements(s), s.CreatedAt, now)
	return Entry{
		ID: s.ID, Name: s.Name, Role: s.Role, Influence: influence, Interest: interest,
		Quadrant: sum.Quadrant, Sentiment: sum.Sentiment, AtRisk: sum.AtRisk, AtRiskReason: sum.AtRiskReason,
	}
}

// StoredEngagements is what a stakeholder row keeps of its engagements.
func StoredEngagements(s dbsqlc.Stakeholder) Stored {
	recent := make([]Sentiment, len(s.RecentSentiments))
	for i, r := range s.RecentSentiments {
		recent[i] = Sentiment(r)
	}
	return Stored{Count: int(s.EngagementCount), LastOn: s.LastEngagementOn, Recent: recent}
}
