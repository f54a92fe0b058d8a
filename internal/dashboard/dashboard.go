// Package dashboard holds the rules of saved dashboards (GET/POST/PUT/DELETE
// /v1/dashboards): what a dashboard and its widgets may hold, and who may see
// and write one. The widgets' parameters are the analytics endpoints' query
// parameters, read into the analytics operations' typed parameters (ReadWidget).
package dashboard

import (
	"errors"
	"fmt"
	"slices"
)

// Visibility of a dashboard.
type Visibility string

const (
	// Personal: seen and written by its owner only; to anyone else it does not exist.
	Personal Visibility = "personal"
	// Shared: seen by every analytics:read holder of the tenant, written by admin:config holders.
	Shared Visibility = "shared"
)

// Visibilities in the order the API lists them.
var Visibilities = []Visibility{Personal, Shared}

// WidgetType names the analytics query a widget runs.
type WidgetType string

const (
	ROI         WidgetType = "roi"
	Realization WidgetType = "realization"
	Trends      WidgetType = "trends"
	Forecasts   WidgetType = "forecasts"
	Benchmarks  WidgetType = "benchmarks"
)

// WidgetTypes are the types accepted: one per analytics endpoint.
var WidgetTypes = []WidgetType{ROI, Realization, Trends, Forecasts, Benchmarks}

// Limits.
const (
	MaxWidgets        = 20   // widgets of one dashboard (GET /data evaluates them all in one request)
	MaxTitleLength    = 200  // characters of a widget title
	MaxParams         = 10   // parameters of one widget
	MaxParamLength    = 100  // characters of one parameter value
	MaxPerOwner       = 100  // dashboards one user has created
	MaxAtRiskListed   = 10   // at-risk benefits and stakeholders the portfolio dashboard lists
	MaxDescriptionLen = 2000 // characters of a description
)

// ErrLimitReached is returned (wrapped) when a user already has MaxPerOwner dashboards.
var ErrLimitReached = errors.New("dashboard limit reached")

// CheckCanAdd refuses a dashboard beyond MaxPerOwner of one owner.
func CheckCanAdd(owned int64) error {
	if owned >= MaxPerOwner {
		return fmt.Errorf("%w: a user can have at most %d dashboards; delete one first", ErrLimitReached, MaxPerOwner)
	}
	return nil
}

// Widget is one analytics query of a dashboard, as stored.
type Widget struct {
	Type   WidgetType        `json:"type"`
	Title  string            `json:"title"`
	Params map[string]string `json:"params"`
}

// Caller is who asks: its subject and whether it holds admin:config.
type Caller struct {
	Subject     string
	AdminConfig bool
}

// Dashboard is what the write rule needs of a stored dashboard.
type Dashboard struct {
	Visibility Visibility
	OwnerID    string
}

// Visible reports whether the caller may see d (others' personal
// dashboards are not found, never forbidden).
func Visible(d Dashboard, c Caller) bool {
	return d.Visibility == Shared || d.OwnerID == c.Subject
}

// ErrForbidden is returned (wrapped) when the caller may see a dashboard but not write it.
var ErrForbidden = errors.New("forbidden")

// CheckWrite decides whether the caller may write a dashboard that is
// before (nil: a new one) and will be after: a personal dashboard is its
// owner's; making, changing or deleting a shared one needs admin:config.
// It returns the owner the dashboard has after the write: a new dashboard
// and one made personal belong to the caller.
func CheckWrite(before *Dashboard, after Visibility, c Caller) (owner string, err error) {
	if before != nil && before.Visibility == Shared && !c.AdminConfig {
		return "", fmt.Errorf("%w: changing a shared dashboard needs admin:config", ErrForbidden)
	}
	if before != nil && before.Visibility == Personal && before.OwnerID != c.Subject {
		return "", fmt.Errorf("%w: a personal dashboard is written only by its owner", ErrForbidden) // not reached: invisible, so 404 first
	}
	if after == Shared && !c.AdminConfig {
		return "", fmt.Errorf("%w: a shared dashboard needs admin:config; create it as personal", ErrForbidden)
	}
	if before != nil && after == Shared {
		return before.OwnerID, nil
	}
	return c.Subject, nil
}

// KnownType reports whether t is a widget type accepted today.
func KnownType(t string) bool { return slices.Contains(WidgetTypes, WidgetType(t)) }
