package stakeholder

import (
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// daysAgo is a calendar date n days before now.
func daysAgo(n int) time.Time { return time.Date(2026, 11, 22-n, 0, 0, 0, 0, time.UTC) }

// log builds engagements n days ago with the given sentiments, oldest first.
func log(pairs ...any) []Engagement {
	var out []Engagement
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Engagement{Date: daysAgo(pairs[i].(int)), Sentiment: pairs[i+1].(Sentiment)})
	}
	return out
}

func TestSentimentTrend(t *testing.T) {
	cases := []struct {
		name string
		es   []Engagement
		want Trend
	}{
		{"none", nil, InsufficientData},
		{"one", log(3, Positive), InsufficientData},
		{"two, up", log(10, Neutral, 3, Positive), Improving},
		{"two, down", log(10, Positive, 3, Negative), Declining},
		{"two, same", log(10, Cautious, 3, Cautious), Stable},
		{"three: newest against oldest, the middle does not count", log(30, Positive, 20, Negative, 10, Positive), Stable},
		{"only the last three count", log(50, Negative, 40, Negative, 30, Neutral, 20, Neutral, 10, Positive), Improving},
		{"cautious to negative is a decline", log(30, Neutral, 20, Cautious, 10, Negative), Declining},
		{"input order does not matter, dates do", log(10, Negative, 30, Positive, 20, Neutral), Declining},
		{"same date: the later logged is newer", log(5, Positive, 5, Negative), Declining},
	}
	for _, c := range cases {
		if got := SentimentTrend(c.es); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestAtRisk(t *testing.T) {
	longAgo := daysAgo(400)
	cases := []struct {
		name      string
		influence Influence
		es        []Engagement
		created   time.Time
		want      RiskReason // "" = not at risk
	}{
		// rule 1
		{"critical, latest negative", InfluenceCritical, log(1, Negative), longAgo, NegativeSentiment},
		{"high, latest cautious", InfluenceHigh, log(1, Cautious), longAgo, NegativeSentiment},
		{"high, earlier negative, latest positive", InfluenceHigh, log(20, Negative, 1, Positive), longAgo, ""},
		{"medium, latest cautious: no rule holds", InfluenceMedium, log(1, Cautious), longAgo, ""},
		// rule 2
		{"high, engaged 46 days ago", InfluenceHigh, log(46, Positive), longAgo, NotEngaged},
		{"high, engaged exactly 45 days ago", InfluenceHigh, log(45, Positive), longAgo, ""},
		{"critical, never engaged, created 46 days ago", InfluenceCritical, nil, daysAgo(46), NotEngaged},
		{"critical, never engaged, created 45 days ago", InfluenceCritical, nil, daysAgo(45), ""},
		{"critical, never engaged, created today", InfluenceCritical, nil, now, ""},
		{"low, never engaged for a year: not powerful", InfluenceLow, nil, longAgo, ""},
		{"medium, engaged 200 days ago", InfluenceMedium, log(200, Neutral), longAgo, ""},
		// rule 3
		{"low, declining to negative", InfluenceLow, log(30, Positive, 20, Neutral, 10, Negative), longAgo, DecliningSentiment},
		{"medium, two engagements, down to negative", InfluenceMedium, log(30, Neutral, 10, Negative), longAgo, DecliningSentiment},
		{"low, negative but stable", InfluenceLow, log(20, Negative, 10, Negative), longAgo, ""},
		{"low, declining to cautious only", InfluenceLow, log(20, Positive, 10, Cautious), longAgo, ""},
		{"low, a single negative: no trend", InfluenceLow, log(10, Negative), longAgo, ""},
		// order
		{"rule 1 before rule 2: powerful, negative, 100 days ago", InfluenceCritical, log(100, Negative), longAgo, NegativeSentiment},
		{"rule 1 before rule 3: powerful, declining to negative", InfluenceHigh, log(30, Positive, 10, Negative), longAgo, NegativeSentiment},
		{"high, an old negative, latest positive 60 days ago", InfluenceHigh, log(90, Negative, 60, Positive), longAgo, NotEngaged},
	}
	for _, c := range cases {
		risk, reason := AtRisk(c.influence, c.es, c.created, now)
		if risk != (c.want != "") || reason != c.want {
			t.Errorf("%s: %v %q, want %q", c.name, risk, reason, c.want)
		}
	}
}

func TestAtRiskCountsDaysInUTC(t *testing.T) {
	// 20:00 on 22 November in New York is 01:00 on 23 November UTC: the engagement of
	// 8 October is then 46 days old in UTC (45 by New York's date).
	ny := time.FixedZone("EST", -5*3600)
	late := time.Date(2026, 11, 22, 20, 0, 0, 0, ny)
	es := []Engagement{{Date: time.Date(2026, 10, 8, 0, 0, 0, 0, time.UTC), Sentiment: Positive}}
	if risk, reason := AtRisk(InfluenceHigh, es, daysAgo(400), late); !risk || reason != NotEngaged {
		t.Errorf("got %v %q, want not_engaged", risk, reason)
	}
	if risk, _ := AtRisk(InfluenceHigh, es, daysAgo(400), time.Date(2026, 11, 22, 18, 0, 0, 0, ny)); risk {
		t.Error("at 23:00 UTC on the 22nd the engagement is 45 days old: not at risk")
	}
}

func TestCheckEngagementDate(t *testing.T) {
	cases := []struct {
		name string
		date time.Time
		now  time.Time
		code string
	}{
		{"today", daysAgo(0), now, ""},
		{"long ago", time.Date(2003, 5, 1, 0, 0, 0, 0, time.UTC), now, ""},
		// At 12:00 UTC it is already 02:00 tomorrow at UTC+14: a user there logs today's meeting.
		{"tomorrow, already today at UTC+14", daysAgo(-1), now, ""},
		{"the day after tomorrow", daysAgo(-2), now, validation.CodeInFuture},
		{"tomorrow at 09:59 UTC: nowhere yet", daysAgo(-1), time.Date(2026, 11, 22, 9, 59, 0, 0, time.UTC), validation.CodeInFuture},
		{"tomorrow at 10:00 UTC: midnight at UTC+14", daysAgo(-1), time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), ""},
		{"first allowed day", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), now, ""},
		{"the day before", time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), now, validation.CodeTooEarly},
		{"a typo year", time.Date(26, 11, 1, 0, 0, 0, 0, time.UTC), now, validation.CodeTooEarly},
		// 22:00 on 22 November in New York is already 23 November in UTC
		{"today in UTC, tomorrow locally", daysAgo(-1), time.Date(2026, 11, 22, 22, 0, 0, 0, time.FixedZone("EST", -5*3600)), ""},
	}
	for _, c := range cases {
		err := CheckEngagementDate(c.date, c.now)
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && !isFailure(err, "date", c.code):
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
}

func TestSummarise(t *testing.T) {
	es := log(50, Positive, 30, Neutral, 10, Negative)
	s := Summarise(InfluenceLow, InterestHigh, es, daysAgo(400), now)
	if s.EngagementCount != 3 || s.LastEngagementAt == nil || !s.LastEngagementAt.Equal(daysAgo(10)) ||
		s.Sentiment == nil || *s.Sentiment != Negative || s.SentimentTrend != Declining || s.Quadrant != KeepInformed ||
		!s.AtRisk || s.AtRiskReason == nil || *s.AtRiskReason != DecliningSentiment {
		t.Errorf("got %+v", s)
	}
	s = Summarise(InfluenceMedium, InterestLow, nil, now, now)
	if s.EngagementCount != 0 || s.LastEngagementAt != nil || s.Sentiment != nil || s.SentimentTrend != InsufficientData ||
		s.Quadrant != Monitor || s.AtRisk || s.AtRiskReason != nil {
		t.Errorf("no engagements: got %+v", s)
	}
}
