package initiative

import (
	"fmt"
	"slices"

	"github.com/valuecase/valuecase/internal/rbac"
)

// OwnerChangeError refuses a change of an initiative's owner by someone who
// may not make it (403: the request is understood, the caller lacks the right).
type OwnerChangeError struct {
	From, To string // "" is no owner
}

func (e *OwnerChangeError) Error() string {
	if e.From == "" {
		return "only the Admin role may give an initiative without an owner an owner"
	}
	return "only the initiative's owner or the Admin role may change owner_id"
}

// CheckOwnerChange reports whether actor may change an initiative's owner from
// current to next ("" is no owner). The owner decides the owner-only
// transitions (draft → in_review, active → completed, rejected → draft), so
// holding initiatives:write is not enough: the current owner may hand the
// initiative over (or give it up), and an Admin may reassign it. An
// initiative without an owner gets one only from an Admin, so nobody can
// claim it for themselves. An unchanged owner is no change.
func CheckOwnerChange(current, next string, actor Actor) error {
	if current == next || slices.Contains(actor.Roles, rbac.RoleAdmin) {
		return nil
	}
	if current != "" && actor.Subject == current {
		return nil
	}
	return &OwnerChangeError{From: current, To: next}
}

// OwnerChangeReason is the history reason of an owner entry.
func OwnerChangeReason(from, to string) string {
	name := func(s string) string {
		if s == "" {
			return "nobody"
		}
		return s
	}
	return fmt.Sprintf("owner changed from %s to %s", name(from), name(to))
}
