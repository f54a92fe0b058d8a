package stakeholder

import (
	"slices"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

// EngagementType is how a stakeholder was engaged.
type EngagementType string

const (
	Meeting         EngagementType = "meeting"
	Email           EngagementType = "email"
	Call            EngagementType = "call"
	Presentation    EngagementType = "presentation"
	Survey          EngagementType = "survey"
	OtherEngagement EngagementType = "other"
)

// EngagementTypes lists every engagement type.
var EngagementTypes = []EngagementType{Meeting, Email, Call, Presentation, Survey, OtherEngagement}

// Valid reports whether t names an engagement type.
func (t EngagementType) Valid() bool { return slices.Contains(EngagementTypes, t) }

// Sentiment is how a stakeholder felt in an engagement.
type Sentiment string

const (
	Positive Sentiment = "positive"
	Neutral  Sentiment = "neutral"
	Cautious Sentiment = "cautious"
	Negative Sentiment = "negative"
)

// Sentiments lists every sentiment, best first.
var Sentiments = []Sentiment{Positive, Neutral, Cautious, Negative}

// Valid reports whether s names a sentiment.
func (s Sentiment) Valid() bool { return slices.Contains(Sentiments, s) }

// Score puts sentiments on one scale so a trend can be read from them:
// positive 2, neutral 1, cautious 0, negative −1.
func (s Sentiment) Score() int {
	switch s {
	case Positive:
		return 2
	case Neutral:
		return 1
	case Cautious:
		return 0
	}
	return -1
}

// Trend is the direction of a stakeholder's sentiment.
type Trend string

const (
	Improving        Trend = "improving"
	Stable           Trend = "stable"
	Declining        Trend = "declining"
	InsufficientData Trend = "insufficient_data"
)

// Trends lists every trend value.
var Trends = []Trend{Improving, Stable, Declining, InsufficientData}

// RiskReason says why a stakeholder is at risk.
type RiskReason string

const (
	NegativeSentiment  RiskReason = "negative_sentiment"
	NotEngaged         RiskReason = "not_engaged"
	DecliningSentiment RiskReason = "declining_sentiment"
)

// RiskReasons lists the reasons in the order the rules are tried.
var RiskReasons = []RiskReason{NegativeSentiment, NotEngaged, DecliningSentiment}

// NotEngagedAfterDays is how long a powerful stakeholder may go without an
// engagement before counting as at risk.
const NotEngagedAfterDays = 45

// EarliestEngagement is the first date an engagement may carry; anything
// earlier is a typing error (0026 for 2026), not history.
var EarliestEngagement = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Engagement is what the derived fields need of one logged engagement.
type Engagement struct {
	Date      time.Time // a calendar date
	Sentiment Sentiment
}

// AheadOfUTC is how far the earliest time zone (UTC+14, the Line Islands)
// runs ahead of UTC: a date is in the future only once no place has reached it.
const AheadOfUTC = 14 * time.Hour

// CheckEngagementDate checks the date of an engagement (field "date"): a
// calendar date not before 2000-01-01 and not in the future, which is after
// today's date in the earliest time zone (UTC+14). A user east of UTC logs
// this morning's meeting with their own date, which UTC reaches only later;
// UTC's today alone would refuse it.
func CheckEngagementDate(date, now time.Time) error {
	d := calendarDay(date)
	switch {
	case d.After(calendarDay(now.UTC().Add(AheadOfUTC))):
		return validation.New("date", validation.CodeInFuture, "must not be in the future (after today's date in every time zone)")
	case d.Before(EarliestEngagement):
		return validation.New("date", validation.CodeTooEarly, "must not be before %s", EarliestEngagement.Format(time.DateOnly))
	}
	return nil
}

// chronological orders engagements by date, oldest first. Engagements on the
// same date keep the order they were given in, which must be the order they
// were logged (ORDER BY date, created_at), so the later log is the newer.
func chronological(es []Engagement) []Engagement {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b Engagement) int { return calendarDay(a.Date).Compare(calendarDay(b.Date)) })
	return out
}

// Latest returns the newest engagement; ok is false when there is none.
func Latest(es []Engagement) (e Engagement, ok bool) {
	if len(es) == 0 {
		return Engagement{}, false
	}
	return chronological(es)[len(es)-1], true
}

// SentimentTrend reads the trend from the last three engagements by date:
// the newest's score minus the oldest's of that window; > 0 improving,
// < 0 declining, 0 stable; fewer than two engagements → insufficient_data.
func SentimentTrend(es []Engagement) Trend {
	if len(es) < 2 {
		return InsufficientData
	}
	window := chronological(es)
	window = window[max(0, len(window)-3):]
	switch d := window[len(window)-1].Sentiment.Score() - window[0].Sentiment.Score(); {
	case d > 0:
		return Improving
	case d < 0:
		return Declining
	}
	return Stable
}

// AtRisk applies the three rules in order and returns the first that holds:
//  1. negative_sentiment: influence high or critical and the latest
//     engagement was cautious or negative;
//  2. not_engaged: influence high or critical and no engagement in the last
//     45 days (a latest engagement exactly 45 days ago still counts), or
//     none ever once the stakeholder has existed for more than 45 days;
//  3. declining_sentiment: any influence, the sentiment trend is declining
//     and the latest engagement was negative.
//
// Days are whole calendar days in UTC. The reason is "" when not at risk.
func AtRisk(influence Influence, es []Engagement, createdAt, now time.Time) (bool, RiskReason) {
	latest, engaged := Latest(es)
	powerful := influence.Powerful()
	if powerful && engaged && (latest.Sentiment == Cautious || latest.Sentiment == Negative) {
		return true, NegativeSentiment
	}
	if powerful {
		since := createdAt
		if engaged {
			since = latest.Date
		}
		if daysBetween(since, now) > NotEngagedAfterDays {
			return true, NotEngaged
		}
	}
	if engaged && latest.Sentiment == Negative && SentimentTrend(es) == Declining {
		return true, DecliningSentiment
	}
	return false, ""
}

// Summary is everything a stakeholder response derives from the engagements.
type Summary struct {
	EngagementCount  int
	LastEngagementAt *time.Time
	Sentiment        *Sentiment // of the latest engagement
	SentimentTrend   Trend
	Quadrant         Quadrant
	AtRisk           bool
	AtRiskReason     *RiskReason // nil when not at risk
}

// Summarise derives a stakeholder's summary from all its engagements.
func Summarise(influence Influence, interest Interest, es []Engagement, createdAt, now time.Time) Summary {
	s := Summary{
		EngagementCount: len(es),
		SentimentTrend:  SentimentTrend(es),
		Quadrant:        QuadrantOf(influence, interest),
	}
	if latest, ok := Latest(es); ok {
		s.LastEngagementAt, s.Sentiment = new(latest.Date), new(latest.Sentiment)
	}
	if risk, reason := AtRisk(influence, es, createdAt, now); risk {
		s.AtRisk, s.AtRiskReason = true, new(reason)
	}
	return s
}

// calendarDay is t's date (in t's own location) as midnight UTC, so dates
// compare and subtract as calendar days.
func calendarDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// daysBetween counts calendar days from the UTC date of a to the UTC date of b.
func daysBetween(a, b time.Time) int {
	return int(calendarDay(b.UTC()).Sub(calendarDay(a.UTC())).Hours() / 24)
}

// Stored is what a stakeholder record keeps of its engagements, refreshed in
// the transaction that logs one: the count, the date of the latest, and the
// sentiments of the latest three by date, newest first.
type Stored struct {
	Count  int
	LastOn *time.Time
	Recent []Sentiment // newest first, at most 3
}

// Engagements rebuilds from s the engagements the derived fields read: the
// recent sentiments, oldest first, all dated on the latest date (only that
// date is stored). Latest, SentimentTrend and AtRisk read no more than the
// order of these three and the latest date, so they give on this what they
// give on the full log.
func (s Stored) Engagements() []Engagement {
	if s.LastOn == nil {
		return nil
	}
	es := make([]Engagement, 0, len(s.Recent))
	for i := len(s.Recent) - 1; i >= 0; i-- {
		es = append(es, Engagement{Date: *s.LastOn, Sentiment: s.Recent[i]})
	}
	return es
}

// SummariseStored is Summarise over a stored record, with the real count.
func SummariseStored(influence Influence, interest Interest, s Stored, createdAt, now time.Time) Summary {
	sum := Summarise(influence, interest, s.Engagements(), createdAt, now)
	sum.EngagementCount = s.Count
	return sum
}

// alwaysAtRisk is the AtRiskFrom of a stakeholder at risk whatever the date:
// no clock reads a date before it.
var alwaysAtRisk = EarliestEngagement

// AtRiskFrom is the first UTC calendar date on which AtRisk holds, given
// the engagements as they are now; nil when it never will until they or the
// influence change. Lists filter on it in SQL (`at_risk_from <= today`)
// without a second definition of the rules: AtRisk(…, now) is exactly
// AtRiskFrom ≤ the UTC date of now.
//   - rules 1 and 3 read no clock: when either holds, from 2000-01-01;
//   - rule 2 holds from 46 days after the latest engagement (or the
//     creation, when none) for high and critical influence.
func AtRiskFrom(influence Influence, es []Engagement, createdAt time.Time) *time.Time {
	latest, engaged := Latest(es)
	powerful := influence.Powerful()
	if engaged && powerful && (latest.Sentiment == Cautious || latest.Sentiment == Negative) {
		return new(alwaysAtRisk)
	}
	if engaged && latest.Sentiment == Negative && SentimentTrend(es) == Declining {
		return new(alwaysAtRisk)
	}
	if !powerful {
		return nil
	}
	since := createdAt
	if engaged {
		since = latest.Date
	}
	return new(calendarDay(since.UTC()).AddDate(0, 0, NotEngagedAfterDays+1))
}
