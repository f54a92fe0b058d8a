package initiative

import (
	"errors"
	"testing"
)

func TestCheckTransition(t *testing.T) {
	const ownerSub = "user-owner"
	ownerActor := Actor{Subject: ownerSub}
	adminActor := Actor{Subject: "someone", Roles: []string{"Admin"}}
	execActor := Actor{Subject: "someone", Roles: []string{"Executive"}}
	stranger := Actor{Subject: "someone", Roles: []string{"Analyst"}}

	type want int
	const (
		ok want = iota
		forbidden
		invalid
	)
	cases := []struct {
		from, to Status
		actor    Actor
		want     want
	}{
		{Draft, InReview, ownerActor, ok},
		{Draft, InReview, adminActor, ok},
		{Draft, InReview, execActor, forbidden},
		{Draft, InReview, stranger, forbidden},
		{InReview, Approved, execActor, ok},
		{InReview, Approved, adminActor, ok},
		{InReview, Approved, ownerActor, forbidden},
		{InReview, Rejected, execActor, ok},
		{InReview, Rejected, stranger, forbidden},
		{Approved, Active, adminActor, ok},
		{Approved, Active, execActor, forbidden},
		{Active, Completed, ownerActor, ok},
		{Active, Completed, adminActor, ok},
		{Active, Completed, execActor, forbidden},
		{Active, Archived, adminActor, ok},
		{Active, Archived, ownerActor, forbidden},
		{Completed, Archived, adminActor, ok},
		{Rejected, Draft, ownerActor, ok},
		{Rejected, Archived, adminActor, ok},
		{Rejected, Approved, adminActor, invalid},
		{Draft, Approved, adminActor, invalid},
		{Draft, Active, adminActor, invalid},
		{Archived, Draft, adminActor, invalid},
		{Archived, Active, adminActor, invalid},
		{Completed, Active, adminActor, invalid},
		{Draft, Draft, adminActor, invalid},
	}
	for _, c := range cases {
		err := CheckTransition(c.from, c.to, ownerSub, c.actor)
		var te *TransitionError
		switch c.want {
		case ok:
			if err != nil {
				t.Errorf("%s→%s by %v: want allowed, got %v", c.from, c.to, c.actor, err)
			}
		case forbidden, invalid:
			if !errors.As(err, &te) || te.Forbidden != (c.want == forbidden) {
				t.Errorf("%s→%s by %v: want forbidden=%v, got %v", c.from, c.to, c.actor, c.want == forbidden, err)
			}
		}
	}
}

func TestOwnerNeedsMatchingSubject(t *testing.T) {
	// An initiative without an owner has no owner to match, even for an empty subject.
	if err := CheckTransition(Draft, InReview, "", Actor{Subject: ""}); err == nil {
		t.Fatal("an empty subject must not count as the owner of an ownerless initiative")
	}
}

func TestArchivedIsFinal(t *testing.T) {
	if n := Next(Archived); len(n) != 0 {
		t.Fatalf("archived must be final, got exits %v", n)
	}
}
