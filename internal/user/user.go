// Package user holds the rules of a tenant's users: their lifecycle states
// and the guarantee that a tenant always keeps an active Admin.
package user

import (
	"errors"
	"fmt"
	"slices"

	"github.com/valuecase/valuecase/internal/rbac"
)

// Status is a user's state: invited until the first sign-in, then active,
// deactivated by an Admin (and reactivated to active).
type Status string

const (
	Invited     Status = "invited"
	Active      Status = "active"
	Deactivated Status = "deactivated"
)

// Statuses lists every state.
var Statuses = []Status{Invited, Active, Deactivated}

// ErrLastAdmin refuses a change that would leave the tenant without an active Admin.
var ErrLastAdmin = errors.New("this is the last active Admin of the tenant; make another user Admin first")

// IsActiveAdmin reports whether a user counts towards the tenant's active Admins.
func IsActiveAdmin(status Status, roles []string) bool {
	return status == Active && slices.Contains(roles, rbac.RoleAdmin)
}

// CheckKeepsAdmin refuses to take a user out of the active Admins (remove
// the role, deactivate) when no other active Admin remains. The caller
// counts the others under a lock that serialises such changes.
func CheckKeepsAdmin(status Status, roles []string, otherActiveAdmins int64) error {
	if IsActiveAdmin(status, roles) && otherActiveAdmins == 0 {
		return ErrLastAdmin
	}
	return nil
}

// CheckDeactivate refuses to deactivate a user twice.
func CheckDeactivate(status Status) error {
	if status == Deactivated {
		return &StatusError{Reason: "the user is already deactivated"}
	}
	return nil
}

// CheckReactivate allows reactivating only a deactivated user.
func CheckReactivate(status Status) error {
	if status != Deactivated {
		return &StatusError{Reason: fmt.Sprintf("the user is %s, not deactivated", status)}
	}
	return nil
}

// ErrWrongStatus refuses a lifecycle change the user's state does not allow.
var ErrWrongStatus = errors.New("wrong status")

// StatusError is ErrWrongStatus with its reason, as a client reads it.
type StatusError struct{ Reason string }

func (e *StatusError) Error() string { return ErrWrongStatus.Error() + ": " + e.Reason }

func (e *StatusError) Unwrap() error { return ErrWrongStatus }
