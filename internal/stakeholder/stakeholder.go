// Package stakeholder holds the rules of stakeholders and their engagements
// (spec sections 2 and 4, and the lead's value-model decisions): allowed
// values, limits, field checks, and what is derived from the engagements
// (power–interest quadrant, sentiment trend, at-risk). No storage, no HTTP:
// handlers map validation.Errors to 422 and ErrLimitReached to 409.
package stakeholder

import (
	"errors"
	"net/mail"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/valuecase/valuecase/internal/validation"
)

// Influence is how much a stakeholder can sway the initiative.
type Influence string

const (
	InfluenceLow      Influence = "low"
	InfluenceMedium   Influence = "medium"
	InfluenceHigh     Influence = "high"
	InfluenceCritical Influence = "critical"
)

// Influences lists every influence level, lowest first.
var Influences = []Influence{InfluenceLow, InfluenceMedium, InfluenceHigh, InfluenceCritical}

// Valid reports whether i names an influence level.
func (i Influence) Valid() bool { return slices.Contains(Influences, i) }

// Powerful reports whether i counts as power on the power–interest grid, and
// so whether the stakeholder's silence or mood puts the initiative at risk.
func (i Influence) Powerful() bool { return i == InfluenceHigh || i == InfluenceCritical }

// Interest is how much a stakeholder cares about the initiative.
type Interest string

const (
	InterestLow    Interest = "low"
	InterestMedium Interest = "medium"
	InterestHigh   Interest = "high"
)

// Interests lists every interest level, lowest first.
var Interests = []Interest{InterestLow, InterestMedium, InterestHigh}

// Valid reports whether i names an interest level.
func (i Interest) Valid() bool { return slices.Contains(Interests, i) }

// Limits (spec section 8 and the value-model decisions).
const (
	MaxPerInitiative = 500 // stakeholders per initiative
	MaxLabelLength   = 100 // role, department (characters)
	MaxEmailLength   = 254 // the longest address SMTP can carry (RFC 5321 path limit less the brackets)
)

// ErrLimitReached is the 409 past MaxPerInitiative.
var ErrLimitReached = errors.New("the initiative already has the maximum of 500 stakeholders")

// CheckCanAdd reports whether an initiative that has count stakeholders may get another.
func CheckCanAdd(count int) error {
	if count >= MaxPerInitiative {
		return ErrLimitReached
	}
	return nil
}

// CheckEmail checks an e-mail address and returns its duplicate key. The
// address must be exactly what net/mail reads as a bare address (no display
// name, no angle brackets, no surrounding spaces), so what is stored is what
// was sent. The key is lower-cased: duplicates within an initiative are found
// case-insensitively (409 ALREADY_EXISTS). A failure is a *validation.Error.
func CheckEmail(field, email string) (key string, err error) {
	if email == "" {
		return "", validation.New(field, validation.CodeRequired, "is required")
	}
	if n := utf8.RuneCountInString(email); n > MaxEmailLength {
		return "", validation.New(field, validation.CodeTooLong, "must be at most %d characters (got %d)", MaxEmailLength, n)
	}
	addr, perr := mail.ParseAddress(email)
	if perr != nil || addr.Address != email {
		return "", validation.New(field, validation.CodeInvalidFormat, "must be an e-mail address such as name@example.com")
	}
	return strings.ToLower(email), nil
}

// CheckLabel checks a role or department: free text, trimmed, at most
// MaxLabelLength characters, no control characters (they break exports and
// one-line displays). It returns the trimmed text; "" means none.
func CheckLabel(field, value string) (string, error) {
	value = strings.TrimSpace(value)
	if n := utf8.RuneCountInString(value); n > MaxLabelLength {
		return "", validation.New(field, validation.CodeTooLong, "must be at most %d characters (got %d)", MaxLabelLength, n)
	}
	if strings.IndexFunc(value, unicode.IsControl) >= 0 {
		return "", validation.New(field, validation.CodeInvalidValue, "must not contain control characters such as line breaks or tabs")
	}
	return value, nil
}
