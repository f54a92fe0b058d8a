package stakeholder

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/validation"
)

func TestCheckWritable(t *testing.T) {
	for _, s := range initiative.Statuses {
		err := CheckWritable(s)
		if (s == initiative.Archived) != errors.Is(err, ErrInitiativeArchived) || (err != nil && !errors.Is(err, initiative.ErrArchived)) {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestCheckCanEngage(t *testing.T) {
	if CheckCanEngage(MaxEngagementsPerStakeholder-1) != nil || !errors.Is(CheckCanEngage(MaxEngagementsPerStakeholder), ErrEngagementLimit) {
		t.Error("at most 10,000 engagements per stakeholder")
	}
}

func TestCheckFields(t *testing.T) {
	ok := Fields{Email: "Ana@Example.com", Role: new("  CFO "), Department: new("   "), Influence: InfluenceHigh, Interest: InterestLow}
	got, err := CheckFields(ok)
	if err != nil || got.EmailKey != "ana@example.com" || got.Role == nil || *got.Role != "CFO" || got.Department != nil {
		t.Fatalf("got %+v, %v", got, err)
	}
	// Every failure at once, each against its field.
	_, err = CheckFields(Fields{Email: "ana", Role: new(strings.Repeat("r", 101)), Department: new("a\tb"), Influence: "huge", Interest: ""})
	es, isList := errors.AsType[validation.Errors](err)
	if !isList {
		t.Fatalf("got %v", err)
	}
	var got2 []string
	for _, e := range es {
		got2 = append(got2, e.Field+"/"+e.Code)
	}
	want := []string{"email/invalid_format", "role/too_long", "department/invalid_value", "influence/invalid_value", "interest/required"}
	if !slices.Equal(got2, want) {
		t.Errorf("got %v, want %v", got2, want)
	}
	if _, err := CheckFields(Fields{Email: "a@b.co", Influence: InfluenceLow, Interest: "critical"}); !isFirstFailure(err, "interest", validation.CodeInvalidValue) {
		t.Errorf("interest critical: %v", err)
	}
}

func TestCheckEngagement(t *testing.T) {
	if err := CheckEngagement(EngagementInput{Type: Meeting, Sentiment: Positive, Date: daysAgo(1)}, now); err != nil {
		t.Fatal(err)
	}
	err := CheckEngagement(EngagementInput{Type: "lunch", Sentiment: "", Date: daysAgo(-2)}, now)
	es, _ := errors.AsType[validation.Errors](err)
	if len(es) != 3 || !isFailure(es[0], "type", validation.CodeInvalidValue) || !isFailure(es[1], "sentiment", validation.CodeRequired) ||
		!isFailure(es[2], "date", validation.CodeInFuture) {
		t.Errorf("got %v", err)
	}
}

func TestQuadrantMembersAreExactlyTheQuadrant(t *testing.T) {
	for _, q := range Quadrants {
		infs, ins := QuadrantMembers(q)
		if len(infs) == 0 || len(ins) == 0 {
			t.Fatalf("%s: empty", q)
		}
		for _, inf := range Influences {
			for _, in := range Interests {
				member := slices.Contains(infs, inf) && slices.Contains(ins, in)
				if member != (QuadrantOf(inf, in) == q) {
					t.Errorf("%s: (%s, %s) member %v, QuadrantOf %s", q, inf, in, member, QuadrantOf(inf, in))
				}
			}
		}
	}
	if infs, ins := QuadrantMembers(KeepSatisfied); !slices.Equal(infs, []Influence{InfluenceHigh, InfluenceCritical}) || !slices.Equal(ins, []Interest{InterestLow, InterestMedium}) {
		t.Errorf("keep_satisfied: %v %v", infs, ins)
	}
}

// TestAtRiskFromAgreesWithAtRisk: the date the list filter compares with is
// exactly when AtRisk starts to hold, for every influence, a spread of
// engagement logs and creation dates, at every hour of a range of days
// (UTC and a zone behind it).
func TestAtRiskFromAgreesWithAtRisk(t *testing.T) {
	logs := [][]Engagement{
		nil,
		log(3, Positive), log(3, Cautious), log(3, Negative), log(44, Neutral), log(45, Neutral), log(46, Neutral),
		log(30, Positive, 10, Negative), log(30, Negative, 10, Negative), log(30, Neutral, 20, Cautious, 10, Negative),
		log(90, Negative, 60, Positive), log(60, Positive, 50, Cautious), log(200, Positive, 100, Neutral, 80, Negative),
	}
	created := []time.Time{daysAgo(400), daysAgo(46), daysAgo(45), daysAgo(0), now.Add(-90 * time.Minute)}
	zones := []*time.Location{time.UTC, time.FixedZone("EST", -5*3600)}
	n := 0
	for _, inf := range Influences {
		for _, es := range logs {
			for _, c := range created {
				from := AtRiskFrom(inf, es, c)
				for h := -24 * 3; h <= 24*60; h += 5 {
					for _, z := range zones {
						at := now.Add(time.Duration(h) * time.Hour).In(z)
						risk, _ := AtRisk(inf, es, c, at)
						byDate := from != nil && !calendarDay(at.UTC()).Before(*from)
						if risk != byDate {
							t.Fatalf("%s, %v, created %s, at %s: AtRisk %v, AtRiskFrom %v", inf, es, c, at, risk, from)
						}
						n++
					}
				}
			}
		}
	}
	if n < 10_000 {
		t.Fatalf("only %d cases", n)
	}
}

func TestSummariseStored(t *testing.T) {
	// 7 engagements logged; the record keeps the latest three: negative (newest), neutral, positive.
	s := Stored{Count: 7, LastOn: new(daysAgo(10)), Recent: []Sentiment{Negative, Neutral, Positive}}
	sum := SummariseStored(InfluenceLow, InterestHigh, s, daysAgo(400), now)
	full := Summarise(InfluenceLow, InterestHigh, log(80, Cautious, 70, Neutral, 60, Positive, 40, Cautious, 30, Positive, 20, Neutral, 10, Negative), daysAgo(400), now)
	full.EngagementCount = 7
	if sum.EngagementCount != 7 || *sum.Sentiment != Negative || sum.SentimentTrend != Declining || !sum.AtRisk ||
		*sum.AtRiskReason != DecliningSentiment || !sum.LastEngagementAt.Equal(daysAgo(10)) || sum.Quadrant != KeepInformed {
		t.Errorf("got %+v", sum)
	}
	if sum.SentimentTrend != full.SentimentTrend || *sum.Sentiment != *full.Sentiment || sum.AtRisk != full.AtRisk || *sum.AtRiskReason != *full.AtRiskReason {
		t.Errorf("stored %+v differs from the full log %+v", sum, full)
	}
	if sum := SummariseStored(InfluenceHigh, InterestHigh, Stored{}, daysAgo(50), now); sum.EngagementCount != 0 || sum.Sentiment != nil ||
		sum.LastEngagementAt != nil || !sum.AtRisk || *sum.AtRiskReason != NotEngaged {
		t.Errorf("never engaged: %+v", sum)
	}
}

// isFirstFailure: the first failure err lists is field's, with code.
func isFirstFailure(err error, field, code string) bool {
	errs, ok := errors.AsType[validation.Errors](err)
	return ok && len(errs) > 0 && isFailure(errs[0], field, code)
}
