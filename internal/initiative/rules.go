package initiative

import (
	"errors"
	"fmt"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

// Limits (spec section 8).
const (
	MaxLive     = 1000 // initiatives of a tenant that are not archived
	MaxProjects = 200  // projects of one initiative
)

// Errors the handlers map to 409.
var (
	ErrLiveLimit    = fmt.Errorf("the tenant has reached its limit of %d initiatives that are not archived", MaxLive)
	ErrProjectLimit = fmt.Errorf("the initiative has reached its limit of %d projects", MaxProjects)
	ErrArchived     = errors.New("the initiative is archived and read-only")
)

// ProjectActive is the status of a project at work (the projects' other states are not counted).
const ProjectActive = "active"

// CheckCreateStatus holds a new initiative to starting as draft: a status
// sent on create may only say so.
func CheckCreateStatus(status *Status) error {
	if status != nil && *status != Draft {
		var errs validation.Errors
		errs.Add("status", validation.CodeInvalidValue, "a new initiative starts as draft; change its status afterwards")
		return errs.Err()
	}
	return nil
}

// CheckCanCreate keeps the tenant within MaxLive; live counts the initiatives
// not archived, under the tenant's create lock.
func CheckCanCreate(live int64) error {
	if live >= MaxLive {
		return ErrLiveLimit
	}
	return nil
}

// Owner is who owns a new initiative: the one named, else its creator.
func Owner(named *string, creator string) string {
	if named != nil {
		return *named
	}
	return creator
}

// CheckWritable refuses changes to an archived initiative (archived is final).
func CheckWritable(s Status) error {
	if s == Archived {
		return ErrArchived
	}
	return nil
}

// ArchivesProjects reports whether moving to s archives the initiative's projects too.
func ArchivesProjects(s Status) bool { return s == Archived }

// CheckCanAddProject keeps an initiative within MaxProjects.
func CheckCanAddProject(count int) error {
	if count >= MaxProjects {
		return ErrProjectLimit
	}
	return nil
}

// Activity is what the detail's metrics say of an initiative's projects and history.
type Activity struct {
	ProjectsTotal      int
	ProjectsActive     int
	StatusChanges      int // transitions since creation
	DaysInCurrentState int // whole days since the last transition (or creation)
}

// Measure computes the activity metrics from the projects' statuses and the
// times of the status history entries (oldest first; the first is the creation).
func Measure(projectStatuses []string, history []time.Time, now time.Time) Activity {
	a := Activity{ProjectsTotal: len(projectStatuses), StatusChanges: max(len(history)-1, 0)}
	for _, s := range projectStatuses {
		if s == ProjectActive {
			a.ProjectsActive++
		}
	}
	if len(history) > 0 {
		a.DaysInCurrentState = int(now.Sub(history[len(history)-1]).Hours() / 24)
	}
	return a
}
