// Package initiative holds the initiative status lifecycle (spec section 3):
// which transitions exist and who may make them, and who may change an
// initiative's owner (owner.go).
package initiative

import (
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/rbac"
)

// Status is an initiative state.
type Status string

const (
	Draft     Status = "draft"
	InReview  Status = "in_review"
	Approved  Status = "approved"
	Rejected  Status = "rejected"
	Active    Status = "active"
	Completed Status = "completed"
	Archived  Status = "archived"
)

// Statuses lists every state in lifecycle order.
var Statuses = []Status{Draft, InReview, Approved, Rejected, Active, Completed, Archived}

// Valid reports whether s names a state.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Actor is who asks for a transition.
type Actor struct {
	TenantID uuid.UUID
	Subject  string
	Roles    []string
	// Source is an integration's (integration.Source) when it writes:
	// its records keep it with their ExternalID.
	Source string
}

type who int

const (
	owner who = 1 << iota
	admin
	executive
)

type edge struct{ from, to Status }

// transitions is the spec's table, plus the two exits from rejected that the
// spec leaves open (decided: back to draft for rework, or archived by an Admin).
var transitions = map[edge]who{
	{Draft, InReview}:     owner | admin,
	{InReview, Approved}:  admin | executive,
	{InReview, Rejected}:  admin | executive,
	{Approved, Active}:    admin,
	{Active, Completed}:   admin | owner,
	{Active, Archived}:    admin,
	{Completed, Archived}: admin,
	{Rejected, Draft}:     owner | admin,
	{Rejected, Archived}:  admin,
}

// TransitionError explains a refused transition; Forbidden separates a wrong
// role (403) from a transition that does not exist (422).
type TransitionError struct {
	From, To  Status
	Forbidden bool
	Allowed   string
	Next      []Status // of a transition that does not exist: the states reachable from From
}

func (e *TransitionError) Error() string {
	if e.Forbidden {
		return fmt.Sprintf("changing status from %s to %s requires %s", e.From, e.To, e.Allowed)
	}
	return fmt.Sprintf("status cannot change from %s to %s", e.From, e.To)
}

// Explain is the refusal of a transition that does not exist with the states it could go to.
func (e *TransitionError) Explain() string {
	return fmt.Sprintf("%s; allowed from %s: %v", e.Error(), e.From, e.Next)
}

// CheckTransition reports whether actor may move an initiative owned by ownerID from one status to another.
func CheckTransition(from, to Status, ownerID string, actor Actor) error {
	allowed, ok := transitions[edge{from, to}]
	if !ok {
		return &TransitionError{From: from, To: to}
	}
	var has who
	if ownerID != "" && actor.Subject == ownerID {
		has |= owner
	}
	if slices.Contains(actor.Roles, rbac.RoleAdmin) {
		has |= admin
	}
	if slices.Contains(actor.Roles, rbac.RoleExecutive) {
		has |= executive
	}
	if has&allowed == 0 {
		return &TransitionError{From: from, To: to, Forbidden: true, Allowed: describe(allowed)}
	}
	return nil
}

// Next lists the states reachable from s by anyone.
func Next(s Status) []Status {
	var out []Status
	for _, to := range Statuses {
		if _, ok := transitions[edge{s, to}]; ok {
			out = append(out, to)
		}
	}
	return out
}

func describe(w who) string {
	var names []string
	if w&owner != 0 {
		names = append(names, "the initiative's owner")
	}
	if w&admin != 0 {
		names = append(names, "the Admin role")
	}
	if w&executive != 0 {
		names = append(names, "the Executive role")
	}
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " or " + names[1]
	}
	return fmt.Sprint(names)
}
