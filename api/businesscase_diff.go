package api

// GET /v1/business-cases/{id}/diff?against={other_id} ("Business
// case diff"): the ROI, NPV and payback of two cases and the change between
// them attributed to its causes. The rule is internal/businesscase
// (Attribute); this handler finds each case's inputs.

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/initiativevalue"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/wire"
)

// Where a case's figures in a diff come from.
const (
	diffSourceLive     = "live"     // not approved: the initiative's rows now
	diffSourceFrozen   = "frozen"   // approved: the inputs frozen at approval
	diffSourceSnapshot = "snapshot" // approved before the inputs were frozen: the frozen figures only
)

// Why a diff has no attribution.
const (
	diffNoFrozenInputs      = "no_frozen_inputs"
	diffBaseCurrencyDiffers = "base_currency_differs"
	diffMissingFXRates      = "missing_fx_rates"
)

type diffCaseJSON struct {
	ID           string                   `json:"id"`
	Name         string                   `json:"name"`
	InitiativeID string                   `json:"initiative_id"`
	Version      int32                    `json:"version"`
	Status       string                   `json:"status"`
	Source       string                   `json:"source"`
	BaseCurrency string                   `json:"base_currency"`
	AsOf         string                   `json:"as_of"`
	Figures      businesscase.DiffFigures `json:"figures"`
}

type diffAttributionJSON struct {
	Method string               `json:"method"`
	Order  []businesscase.Cause `json:"order"`
	Steps  []businesscase.Step  `json:"steps"`
}

type businessCaseDiffJSON struct {
	Case                  diffCaseJSON         `json:"case"`
	Against               diffCaseJSON         `json:"against"`
	Change                businesscase.Change  `json:"change"`
	Attribution           *diffAttributionJSON `json:"attribution"`
	AttributionNullReason *string              `json:"attribution_null_reason"`
}

// diffSide is one case of a diff: its figures and, unless only frozen
// figures exist, its inputs.
type diffSide struct {
	json      diffCaseJSON
	inputs    *businesscase.Inputs
	missingFX bool // live figures that need an FX rate the tenant has not entered
}

// loadDiffSide reads a case's inputs: an approved case's frozen ones (or,
// frozen before inputs were, its frozen figures), any other case's live
// ones at now.
func loadDiffSide(c *fiber.Ctx, row dbsqlc.BusinessCase, now time.Time) (diffSide, error) {
	ctx, tx := c.UserContext(), requestTx(c)
	side := diffSide{json: diffCaseJSON{ID: row.ID.String(), Name: row.Name, InitiativeID: row.InitiativeID.String(), Version: row.Version, Status: row.Status}}
	if businesscase.Status(row.Status) == businesscase.Approved {
		var snap businesscase.Snapshot
		if row.Snapshot != nil {
			var err error
			if snap, err = businesscase.ReadSnapshot(row.Snapshot); err != nil {
				return side, err
			}
		}
		side.json.AsOf = wire.Timestamp(snap.AsOf)
		in, ok, err := export.FrozenInputs(ctx, tx, row.TenantID, row.ID)
		if err != nil {
			return side, err
		}
		if ok {
			side.json.Source, side.json.BaseCurrency, side.json.Figures, side.inputs = diffSourceFrozen, in.BaseCurrency, businesscase.FiguresOf(in), &in
			return side, nil
		}
		side.json.Source, side.json.BaseCurrency = diffSourceSnapshot, snap.BaseCurrency
		side.json.Figures = businesscase.DiffFigures{DiscountRate: snap.DiscountRate,
			ROIPercent: businesscase.Figure{Value: snap.ROIPercent, Reason: snap.ROIReason}, NPV: businesscase.Figure{Value: new(snap.NPV)},
			PaybackMonths: businesscase.Figure{Value: money.PercentPtr(snap.PaybackMonths), Reason: snap.PaybackReason}}
		return side, nil
	}
	rows, err := initiativevalue.Load(ctx, tx, row.TenantID, row.InitiativeID, now)
	if err != nil {
		return side, err
	}
	in, missing, err := businesscase.InputsOf(rows)
	if err != nil {
		return side, err
	}
	side.json.Source, side.json.AsOf, side.json.BaseCurrency = diffSourceLive, wire.Timestamp(now.UTC()), in.BaseCurrency
	if len(missing) > 0 {
		// Never a partial figure: null, and no attribution.
		side.missingFX = true
		reason := func() businesscase.Figure { return businesscase.Figure{Reason: new(diffMissingFXRates)} }
		side.json.Figures = businesscase.DiffFigures{DiscountRate: in.DiscountRate, ROIPercent: reason(), NPV: reason(), PaybackMonths: reason()}
		return side, nil
	}
	side.json.Figures, side.inputs = businesscase.FiguresOf(in), &in
	return side, nil
}

func (s *Server) businessCaseDiff(c *fiber.Ctx) error {
	q := parseQuery(c)
	againstText, hasAgainst := q.str("against")
	if err := q.done(); err != nil {
		return err
	}
	row, err := loadBusinessCase(c, false)
	if err != nil {
		return err
	}
	if !hasAgainst {
		return InvalidParameter("query parameter against is required: the id of the business case to compare with")
	}
	againstID, err := uuid.Parse(againstText)
	if err != nil {
		return InvalidParameter("query parameter against must be a UUID")
	}
	if againstID == row.ID {
		return InvalidParameter("query parameter against must name another business case than the path's")
	}
	other, err := db.Q.BusinessCaseGet(c.UserContext(), requestTx(c), dbsqlc.BusinessCaseGetParams{TenantID: principal(c).TenantID, ID: againstID})
	if err := found("business case", err); err != nil {
		return err
	}
	now := time.Now()
	target, err := loadDiffSide(c, row, now)
	if err != nil {
		return err
	}
	base, err := loadDiffSide(c, other, now)
	if err != nil {
		return err
	}
	out := businessCaseDiffJSON{Case: target.json, Against: base.json, Change: businesscase.ChangeOf(base.json.Figures, target.json.Figures)}
	switch {
	case target.json.BaseCurrency != base.json.BaseCurrency:
		// Amounts in two currencies are not compared (nor converted at
		// some rate the cases never used).
		out.AttributionNullReason, out.Change = new(diffBaseCurrencyDiffers), businesscase.Change{}
	case target.missingFX || base.missingFX:
		out.AttributionNullReason = new(diffMissingFXRates)
	case target.inputs == nil || base.inputs == nil:
		out.AttributionNullReason = new(diffNoFrozenInputs)
	default:
		out.Attribution = &diffAttributionJSON{Method: "sequential_substitution", Order: diffOrder, Steps: businesscase.Attribute(*base.inputs, *target.inputs)}
	}
	return c.JSON(fiber.Map{"data": out})
}

// diffOrder is the order of the substitution steps.
var diffOrder = []businesscase.Cause{businesscase.CauseDiscountRate, businesscase.CauseCosts,
	businesscase.CauseBenefitRemoved, businesscase.CauseBenefitAdded, businesscase.CauseBenefitChanged}
