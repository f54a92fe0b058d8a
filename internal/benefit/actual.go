package benefit

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/validation"
)

// CheckActualPeriod checks the period an actual is filed for (YYYY-MM) and
// returns the period it is filed under: the month itself for monthly
// benefits, its quarter's first month for quarterly ones, so any month of a
// quarter may be given. It refuses, on field "period":
//   - invalid_format: not a real YYYY-MM month (2026-13);
//   - in_future: a month after the current one (UTC); the current month is
//     allowed, so a quarter in progress can be reported;
//   - too_early: a period before the one holding the benefit's expected start date.
func CheckActualPeriod(f Frequency, period string, start, now time.Time) (finance.Month, error) {
	m, ok := parsePeriod(period)
	if !ok {
		return 0, validation.New("period", validation.CodeInvalidFormat, "must be a month YYYY-MM, e.g. 2026-04")
	}
	if m > finance.MonthOfTime(now) {
		return 0, validation.New("period", validation.CodeInFuture, "%s has not begun yet", period)
	}
	p, first := Normalise(f, m), Normalise(f, finance.MonthOfTime(start))
	if p < first {
		return 0, validation.New("period", validation.CodeTooEarly, "%s is before the benefit's first period %s (expected_start_date %s)",
			period, first, start.Format(time.DateOnly))
	}
	return p, nil
}

// Filing is what recording a value for a period amounts to.
type Filing int

const (
	// FirstValue: the period had no actual; a new one is recorded.
	FirstValue Filing = iota
	// Correction: the period had a different value; the actual is updated and
	// a revision (who, when, old value, new value) keeps the old one.
	Correction
	// SameValue: the period already holds exactly this value (e.g. a retried
	// request). Nothing changes: no revision, no new event, so retries do not
	// litter the history.
	SameValue
)

// Filed is what an actual holds for its period.
type Filed struct {
	Value       float64
	Notes       string
	EvidenceURL *string
}

// ClassifyFiling tells what filing next does to a period whose current
// actual is previous (nil when it has none). A new value, or the same value
// with other notes or evidence, is a correction: the revision keeps what was
// there before.
func ClassifyFiling(previous *Filed, next Filed) Filing {
	switch {
	case previous == nil:
		return FirstValue
	case previous.Value == next.Value && previous.Notes == next.Notes && equalURL(previous.EvidenceURL, next.EvidenceURL):
		return SameValue
	}
	return Correction
}

func equalURL(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// MaxRevisions is how many times one period's actual may be corrected: the
// history stays readable in every listing of the benefit's actuals.
const MaxRevisions = 100

// ErrTooManyRevisions: the API answers 409; the period's history is full.
var ErrTooManyRevisions = errors.New("this period's actual has been corrected the maximum of 100 times")

// CheckCanCorrect reports whether an actual with count revisions may be corrected once more.
func CheckCanCorrect(count int) error {
	if count >= MaxRevisions {
		return ErrTooManyRevisions
	}
	return nil
}

// MaxEvidenceURLLen bounds evidence_url.
const MaxEvidenceURLLen = 2048

// CheckEvidenceURL reports (on field evidence_url) a link that is not an
// absolute http or https URL with a host, or longer than MaxEvidenceURLLen.
// The link is only stored and shown, never fetched, so any host is fine.
func CheckEvidenceURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case len(s) > MaxEvidenceURLLen:
		return validation.New("evidence_url", validation.CodeTooLong, "must be at most %d characters", MaxEvidenceURLLen)
	case err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return validation.New("evidence_url", validation.CodeInvalidFormat, "must be an absolute http or https URL, e.g. https://finance.example.com/close/2026-03")
	case strings.ContainsAny(s, " \t\n\r"):
		return validation.New("evidence_url", validation.CodeInvalidFormat, "must not contain white space")
	}
	return nil
}
