// Package integration holds the rules of integrations: their
// states and transitions, sync schedules in the integration's time zone, the
// active-integration limit, sync statuses, and what a sync writes (sync.go).
// The provider clients live in internal/integration/provider.
package integration

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // time zones are validated against the embedded IANA database, whatever the host has

	"github.com/google/uuid"
)

// MaxActive is how many integrations of a tenant may be active at once (spec section 8).
const MaxActive = 10

// State of an integration.
type State string

// States: active (syncs run, on schedule and on demand), paused (by a person; no syncs, the
// schedule is paused), error (a sync found the integration cannot work, e.g. needs_reauth after
// a 401; no syncs until a PUT/PATCH fixes it), disconnected (DELETE; final, secret erased).
const (
	Active       State = "active"
	Paused       State = "paused"
	Error        State = "error"
	Disconnected State = "disconnected"
)

// States lists the states; Settable the ones a client may ask for in PUT/PATCH.
var (
	States   = []string{string(Active), string(Paused), string(Error), string(Disconnected)}
	Settable = []string{string(Active), string(Paused)}
)

// NeedsReauth is last_error after the provider refused the token (401/403).
const NeedsReauth = "needs_reauth"

// Typed errors the API maps: ErrConflict → 409, ErrNotConnected → 409 naming the state.
var (
	ErrLimit        = fmt.Errorf("integration: the tenant already has %d active integrations; pause or delete one first", MaxActive)
	ErrDisconnected = errors.New("integration: the integration is disconnected; create a new one")
)

// NotActiveError says why a sync cannot start.
type NotActiveError struct{ State State }

func (e *NotActiveError) Error() string {
	if e.State == Error {
		return "the integration is in state error; fix its configuration or token with PUT or PATCH (state active) first"
	}
	return fmt.Sprintf("the integration is %s; set state active to sync", e.State)
}

// CheckTransition checks a state change asked for by a client (PUT/PATCH state). to is active
// or paused (Settable). A disconnected integration cannot change. Any other change is allowed:
// active↔paused, and error → active (after fixing the token or config) or paused. activeOthers
// is the number of other active integrations of the tenant: becoming active beyond MaxActive is
// ErrLimit.
func CheckTransition(from, to State, activeOthers int64) error {
	if from == Disconnected {
		return ErrDisconnected
	}
	if to == Active && from != Active && activeOthers >= MaxActive {
		return ErrLimit
	}
	return nil
}

// CheckSync checks that a sync may start now.
func CheckSync(s State) error {
	if s != Active {
		return &NotActiveError{State: s}
	}
	return nil
}

// Source is the `source` of the records a sync of integration id writes.
func Source(id uuid.UUID) string { return "integration/" + id.String() }

// Frequency of a sync schedule.
type Frequency string

// Frequencies.
const (
	Manual         Frequency = "manual"
	Every15Minutes Frequency = "every_15_minutes"
	Hourly         Frequency = "hourly"
	Daily          Frequency = "daily"
	Weekly         Frequency = "weekly"
)

// Frequencies lists them; Weekdays the day_of_week values (Monday first).
var (
	Frequencies = []string{string(Manual), string(Every15Minutes), string(Hourly), string(Daily), string(Weekly)}
	Weekdays    = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)

// Schedule is an integration's sync_schedule. At ("HH:MM", 24-hour, in TimeZone) applies to
// daily and weekly (default 00:00); DayOfWeek to weekly (required). every_15_minutes fires at
// :00, :15, :30, :45 and hourly at :00 of the zone's wall clock.
type Schedule struct {
	Frequency Frequency
	At        string // "" unless daily or weekly
	DayOfWeek string // "" unless weekly
	TimeZone  string // IANA name; "UTC" by default
}

// FieldErrors maps a field of sync_schedule (e.g. "sync_schedule.timezone") to what is wrong.
type FieldErrors map[string]string

// Normalize validates s and fills its defaults, returning the field errors.
func (s *Schedule) Normalize() FieldErrors {
	errs := FieldErrors{}
	if s.Frequency == "" {
		s.Frequency = Manual
	}
	if !slices.Contains(Frequencies, string(s.Frequency)) {
		errs["sync_schedule.frequency"] = "must be one of " + strings.Join(Frequencies, ", ")
	}
	if s.TimeZone == "" {
		s.TimeZone = "UTC"
	}
	if _, err := LoadZone(s.TimeZone); err != nil {
		errs["sync_schedule.timezone"] = err.Error()
	}
	switch s.Frequency {
	case Daily, Weekly:
		if s.At == "" {
			s.At = "00:00"
		}
		if _, _, ok := clock(s.At); !ok {
			errs["sync_schedule.at"] = "must be a time of day HH:MM (00:00 to 23:59)"
		}
	default:
		if s.At != "" {
			errs["sync_schedule.at"] = "applies only to the daily and weekly frequencies"
		}
	}
	s.DayOfWeek = strings.ToLower(s.DayOfWeek)
	switch {
	case s.Frequency == Weekly && !slices.Contains(Weekdays, s.DayOfWeek):
		errs["sync_schedule.day_of_week"] = "is required for weekly: one of " + strings.Join(Weekdays, ", ")
	case s.Frequency != Weekly && s.DayOfWeek != "":
		errs["sync_schedule.day_of_week"] = "applies only to the weekly frequency"
	}
	return errs
}

// LoadZone loads an IANA time zone by name from the embedded database. "Local" and names
// that are not zones are refused.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || len(name) > 64 {
		return nil, fmt.Errorf("must be an IANA time-zone name such as Europe/Berlin or UTC")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, errors.New("is not an IANA time-zone name (e.g. Europe/Berlin, America/New_York, UTC)")
	}
	return loc, nil
}

// clock parses "HH:MM".
func clock(s string) (h, m int, ok bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, 0, false
	}
	return t.Hour(), t.Minute(), true
}

// Calendar is the wall-clock rule of a non-manual schedule in its zone: the minutes, hours
// (nil: every hour) and weekday (-1: every day; 0 = Sunday as in time.Weekday and Temporal) at
// which it fires. Temporal's ScheduleCalendarSpec is built from it (workflows/integration_sync.go).
type Calendar struct {
	Minutes []int
	Hours   []int // nil: every hour
	Weekday int   // -1: any day
}

// Calendar returns the rule of a normalised, non-manual schedule (ok false for manual).
func (s Schedule) Calendar() (Calendar, bool) {
	switch s.Frequency {
	case Every15Minutes:
		return Calendar{Minutes: []int{0, 15, 30, 45}, Weekday: -1}, true
	case Hourly:
		return Calendar{Minutes: []int{0}, Weekday: -1}, true
	case Daily, Weekly:
		h, m, _ := clock(s.At)
		c := Calendar{Minutes: []int{m}, Hours: []int{h}, Weekday: -1}
		if s.Frequency == Weekly {
			c.Weekday = (slices.Index(Weekdays, s.DayOfWeek) + 1) % 7
		}
		return c, true
	}
	return Calendar{}, false
}

// Next returns the first n fire times of a normalised, non-manual schedule after t, in UTC,
// computed on the zone's wall clock as Temporal computes a calendar spec with TimeZoneName:
// a wall time skipped by a DST change (02:30 on the spring-forward night in Berlin) does not
// fire that day; a repeated one (02:30 on the fall-back night) fires once, at its second
// occurrence. The dev server's NextActionTimes agree (workflows' DST test). It is what the API shows as next_sync_at.
func (s Schedule) Next(t time.Time, n int) []time.Time {
	c, ok := s.Calendar()
	if !ok {
		return nil
	}
	loc, err := LoadZone(s.TimeZone)
	if err != nil {
		return nil
	}
	var out []time.Time
	local := t.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	for d := 0; d < 400 && len(out) < n; d++ {
		date := day.AddDate(0, 0, d)
		if c.Weekday >= 0 && int(date.Weekday()) != c.Weekday {
			continue
		}
		hours := c.Hours
		if hours == nil {
			hours = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}
		}
		for _, h := range hours {
			for _, m := range c.Minutes {
				at := time.Date(date.Year(), date.Month(), date.Day(), h, m, 0, 0, loc)
				if at.Hour() != h || at.Minute() != m { // the wall time does not exist that day
					continue
				}
				if later := at.Add(time.Hour); later.Hour() == h && later.Minute() == m {
					at = later // the wall time comes twice: the second one
				}
				if at.After(t) && len(out) < n && (len(out) == 0 || at.After(out[len(out)-1])) {
					out = append(out, at.UTC())
				}
			}
		}
	}
	return out
}

// SyncStatus of a sync.
type SyncStatus string

// Sync statuses: queued (requested), running, succeeded (every item written or unchanged),
// partial (the feed was read to its end but some items failed validation), failed (the sync
// stopped: provider refused the credentials, kept failing, or the integration went away),
// rate_limited (the provider's daily request allowance is spent: the pages read are written,
// the watermark stays, and the schedule tries again at next_try_at), canceled (its run was
// canceled over REST or in the Temporal UI).
const (
	SyncQueued      SyncStatus = "queued"
	SyncRunning     SyncStatus = "running"
	SyncSucceeded   SyncStatus = "succeeded"
	SyncPartial     SyncStatus = "partial"
	SyncFailed      SyncStatus = "failed"
	SyncRateLimited SyncStatus = "rate_limited"
	SyncCanceled    SyncStatus = "canceled"
)

// SyncStatuses lists them; Triggers the ways a sync starts.
var (
	SyncStatuses = []string{string(SyncQueued), string(SyncRunning), string(SyncSucceeded), string(SyncPartial), string(SyncFailed), string(SyncRateLimited), string(SyncCanceled)}
	Triggers     = []string{"schedule", "manual"}
)

// Outcome is how a sync that read its feed to the end finished.
func Outcome(failedItems int) SyncStatus {
	if failedItems > 0 {
		return SyncPartial
	}
	return SyncSucceeded
}

// MaxKeptErrors is how many item errors a sync keeps (the first ones).
const MaxKeptErrors = 20
