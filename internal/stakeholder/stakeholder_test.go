package stakeholder

import (
	"errors"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/internal/validation"
)

func TestEnums(t *testing.T) {
	if len(Influences) != 4 || len(Interests) != 3 || len(EngagementTypes) != 6 || len(Sentiments) != 4 {
		t.Fatal("the lists must match the spec")
	}
	for _, bad := range []string{"", "Low", "very_high"} {
		if Influence(bad).Valid() || Interest(bad).Valid() || EngagementType(bad).Valid() || Sentiment(bad).Valid() {
			t.Errorf("%q must be refused", bad)
		}
	}
	if Interest("critical").Valid() {
		t.Error("interest has no critical level")
	}
	if !EngagementType("survey").Valid() || !Sentiment("cautious").Valid() {
		t.Error("spec values refused")
	}
}

func TestCheckCanAdd(t *testing.T) {
	if CheckCanAdd(499) != nil || !errors.Is(CheckCanAdd(500), ErrLimitReached) || !errors.Is(CheckCanAdd(900), ErrLimitReached) {
		t.Error("at most 500 stakeholders per initiative")
	}
}

func TestQuadrantOfAllCombinations(t *testing.T) {
	want := map[Influence]map[Interest]Quadrant{
		InfluenceLow:      {InterestLow: Monitor, InterestMedium: Monitor, InterestHigh: KeepInformed},
		InfluenceMedium:   {InterestLow: Monitor, InterestMedium: Monitor, InterestHigh: KeepInformed},
		InfluenceHigh:     {InterestLow: KeepSatisfied, InterestMedium: KeepSatisfied, InterestHigh: ManageClosely},
		InfluenceCritical: {InterestLow: KeepSatisfied, InterestMedium: KeepSatisfied, InterestHigh: ManageClosely},
	}
	n := 0
	for _, inf := range Influences {
		for _, in := range Interests {
			n++
			if got := QuadrantOf(inf, in); got != want[inf][in] {
				t.Errorf("QuadrantOf(%s, %s) = %s, want %s", inf, in, got, want[inf][in])
			}
		}
	}
	if n != 12 {
		t.Fatalf("checked %d combinations, want 12", n)
	}
}

func TestCheckEmail(t *testing.T) {
	local, domain := strings.Repeat("a", 64), strings.Repeat("b", 63)+"."+strings.Repeat("c", 63)+"."+strings.Repeat("d", 61)
	longest := local + "@" + domain // 64 + 1 + 189 = 254
	cases := []struct {
		in, key, code string // code "" = accepted with key
	}{
		{"ana@example.com", "ana@example.com", ""},
		{"Ana.Silva@Example.COM", "ana.silva@example.com", ""},
		{"ana+value@sub.example.co.uk", "ana+value@sub.example.co.uk", ""},
		{longest, longest, ""},
		{longest + "d", "", validation.CodeTooLong},
		{"", "", validation.CodeRequired},
		{"Ana <ana@example.com>", "", validation.CodeInvalidFormat},
		{"<ana@example.com>", "", validation.CodeInvalidFormat},
		{" ana@example.com", "", validation.CodeInvalidFormat},
		{"ana@example.com ", "", validation.CodeInvalidFormat},
		{`"ana silva"@example.com`, "", validation.CodeInvalidFormat},
		{"ana", "", validation.CodeInvalidFormat},
		{"ana@", "", validation.CodeInvalidFormat},
		{"ana@@example.com", "", validation.CodeInvalidFormat},
		{"ana@example.com, bo@example.com", "", validation.CodeInvalidFormat},
	}
	for _, c := range cases {
		key, err := CheckEmail("email", c.in)
		if c.code == "" {
			if err != nil || key != c.key {
				t.Errorf("CheckEmail(%q) = %q, %v; want %q", c.in, key, err, c.key)
			}
			continue
		}
		if field, code := fieldCode(err); field != "email" || code != c.code {
			t.Errorf("CheckEmail(%q) = %v; want %s", c.in, err, c.code)
		}
	}
	if len(longest) != 254 {
		t.Fatalf("test address is %d characters", len(longest))
	}
}

func TestCheckLabel(t *testing.T) {
	cases := []struct {
		in, want, code string
	}{
		{"  Finance  ", "Finance", ""},
		{"", "", ""},
		{"   ", "", ""},
		{strings.Repeat("x", 100), strings.Repeat("x", 100), ""},
		{strings.Repeat("é", 100), strings.Repeat("é", 100), ""}, // characters, not bytes
		{strings.Repeat("x", 101), "", validation.CodeTooLong},
		{" " + strings.Repeat("x", 100) + " ", strings.Repeat("x", 100), ""}, // trimmed before counting
		{"Head of\nFinance", "", validation.CodeInvalidValue},
		{"Ops\tEMEA", "", validation.CodeInvalidValue},
		{"CFO\x00", "", validation.CodeInvalidValue},
	}
	for _, c := range cases {
		got, err := CheckLabel("role", c.in)
		switch {
		case c.code == "" && (err != nil || got != c.want):
			t.Errorf("CheckLabel(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.code != "" && !isFailure(err, "role", c.code):
			t.Errorf("CheckLabel(%q) = %v; want %s", c.in, err, c.code)
		}
	}
}

// fieldCode returns the field and code of a *validation.Error ("" when err is nil or another error).
func fieldCode(err error) (field, code string) {
	if e, ok := errors.AsType[*validation.Error](err); ok {
		return e.Field, e.Code
	}
	return "", ""
}

func isFailure(err error, field, code string) bool {
	f, c := fieldCode(err)
	return f == field && c == code
}
