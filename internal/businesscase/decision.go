package businesscase

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
)

// DecisionRequest is what a case asks its approvers to decide: the ask in
// one line, the amount it commits (optional), the date the decision is
// needed by (optional) and the author's recommendation. Every document puts
// it first; it is part of the case, so an approval freezes it with the rest.
type DecisionRequest struct {
	Ask            string           `json:"ask"`
	Amount         *decimal.Decimal `json:"amount,omitempty"`
	Currency       string           `json:"currency,omitempty"`
	DecideBy       *time.Time       `json:"decide_by,omitempty"` // a calendar date, UTC midnight
	Recommendation string           `json:"recommendation,omitempty"`
}

// Limits of a decision request.
const (
	MaxAskLen            = 300
	MaxRecommendationLen = 2000
)

// maxDecisionAmount bounds the amount like a cost's (10^15 in any currency).
var maxDecisionAmount = decimal.New(1, 15)

// checkDecisionRequest adds the problems of r (nil: none asked) to errs:
// an ask of 1–300 characters on one line; an amount at least 0, below
// 10^15, with no more decimals than its currency has, and then a currency
// (ISO 4217), never a currency alone; a recommendation up to 2,000
// characters. Messages never repeat the input.
func checkDecisionRequest(errs *validation.Errors, r *DecisionRequest) {
	if r == nil {
		return
	}
	const f = "decision_request."
	if n := utf8.RuneCountInString(strings.TrimSpace(r.Ask)); n == 0 {
		errs.Add(f+"ask", validation.CodeRequired, "must say what the approvers are asked to decide")
	} else {
		checkText(errs, f+"ask", r.Ask, MaxAskLen, false)
	}
	checkText(errs, f+"recommendation", r.Recommendation, MaxRecommendationLen, true)
	switch {
	case r.Amount == nil && r.Currency != "":
		errs.Add(f+"currency", validation.CodeNotAllowed, "is only kept with an amount")
	case r.Amount == nil:
	case r.Amount.IsNegative():
		errs.Add(f+"amount", validation.CodeOutOfRange, "must not be negative")
	case r.Amount.GreaterThanOrEqual(maxDecisionAmount):
		errs.Add(f+"amount", validation.CodeOutOfRange, "must be less than 10^15")
	case r.Currency == "":
		errs.Add(f+"currency", validation.CodeRequired, "is required with an amount")
	default:
		if err := money.CheckCode(f+"currency", r.Currency); err != nil {
			errs.Append(err)
		} else if places := money.Places(r.Currency); !r.Amount.Equal(r.Amount.Round(places)) {
			errs.Add(f+"amount", validation.CodeInvalidValue, "has more decimals than the currency's %d", places)
		}
	}
}

// ReadDecisionRequest reads the stored request (nil or JSON null: none).
func ReadDecisionRequest(raw []byte) (*DecisionRequest, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var r DecisionRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
