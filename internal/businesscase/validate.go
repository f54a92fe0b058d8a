package businesscase

import (
	"fmt"
	"slices"
	"strings"

	"github.com/valuecase/valuecase/internal/finance"
)

// Problem codes: what blocks an approval (GET /v1/business-cases/{id}/validation).
const (
	ProblemMissingSection     = "missing_section"     // a section the template requires is not listed
	ProblemEmptyContent       = "empty_content"       // a listed section has no body text
	ProblemNoBenefits         = "no_benefits"         // the financial analysis has no benefit to analyse
	ProblemNoCosts            = "no_costs"            // the financial analysis has no cost to analyse
	ProblemMissingFXRates     = "missing_fx_rates"    // the figures would be partial: an FX rate is missing
	ProblemInitiativeArchived = "initiative_archived" // the initiative is archived
)

// Problem is one thing that blocks an approval.
type Problem struct {
	Code    string   `json:"code"`
	Section *Section `json:"section"`
	Message string   `json:"message"`
}

// Facts are what an approval depends on beyond the case itself.
type Facts struct {
	InitiativeArchived bool
	Benefits           int // benefits of the initiative that enter money figures
	Costs              int // cost lines of the initiative
	MissingFXRates     []finance.MissingRate
}

// Validate lists what blocks approving d (empty: it can be approved), in a
// fixed order: archived initiative, missing required sections (in the
// template's order), empty sections (in the case's order), then the
// financial analysis' inputs.
func Validate(d Definition, f Facts) []Problem {
	out := []Problem{}
	if f.InitiativeArchived {
		out = append(out, Problem{Code: ProblemInitiativeArchived, Message: "the initiative is archived"})
	}
	for _, s := range RequiredSections(d.Template) {
		if !slices.Contains(d.Sections, s) {
			out = append(out, Problem{Code: ProblemMissingSection, Section: new(s), Message: fmt.Sprintf("the %s template requires the section %s", d.Template, s)})
		}
	}
	for _, s := range d.Sections {
		if strings.TrimSpace(d.Content[s].Body) == "" {
			out = append(out, Problem{Code: ProblemEmptyContent, Section: new(s), Message: fmt.Sprintf("section %s has no text", s)})
		}
	}
	if slices.Contains(d.Sections, FinancialAnalysis) {
		fa := new(FinancialAnalysis)
		if f.Benefits == 0 {
			out = append(out, Problem{Code: ProblemNoBenefits, Section: fa, Message: "the financial analysis needs at least one benefit in money on the initiative"})
		}
		if f.Costs == 0 {
			out = append(out, Problem{Code: ProblemNoCosts, Section: fa, Message: "the financial analysis needs at least one cost on the initiative"})
		}
		if len(f.MissingFXRates) > 0 {
			rates := make([]string, len(f.MissingFXRates))
			for i, r := range f.MissingFXRates {
				rates[i] = r.Currency + " " + r.Period.String()
			}
			out = append(out, Problem{Code: ProblemMissingFXRates, Section: fa, Message: "the figures need FX rates that are missing: " + strings.Join(rates, ", ")})
		}
	}
	return out
}
