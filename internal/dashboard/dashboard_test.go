package dashboard

import (
	"errors"
	"testing"
)

// The write rule, case by case.
func TestCheckWrite(t *testing.T) {
	alice, aliceAdmin, bob := Caller{Subject: "alice"}, Caller{Subject: "alice", AdminConfig: true}, Caller{Subject: "bob"}
	bobsAdmin := Caller{Subject: "bob", AdminConfig: true}
	personal := &Dashboard{Visibility: Personal, OwnerID: "alice"}
	shared := &Dashboard{Visibility: Shared, OwnerID: "alice"}
	for _, c := range []struct {
		name      string
		before    *Dashboard
		after     Visibility
		caller    Caller
		owner     string
		forbidden bool
	}{
		{"anyone creates a personal one", nil, Personal, bob, "bob", false},
		{"a shared one needs admin:config", nil, Shared, alice, "", true},
		{"admin creates a shared one", nil, Shared, aliceAdmin, "alice", false},
		{"owner edits own personal", personal, Personal, alice, "alice", false},
		{"owner cannot share without admin:config", personal, Shared, alice, "", true},
		{"someone else's personal", personal, Personal, bob, "", true},
		{"shared is read-only without admin:config", shared, Shared, bob, "", true},
		{"another admin edits a shared one: owner kept", shared, Shared, bobsAdmin, "alice", false},
		{"an admin who makes a shared one personal owns it", shared, Personal, bobsAdmin, "bob", false},
	} {
		owner, err := CheckWrite(c.before, c.after, c.caller)
		if errors.Is(err, ErrForbidden) != c.forbidden || owner != c.owner {
			t.Errorf("%s: owner %q err %v, want owner %q forbidden %v", c.name, owner, err, c.owner, c.forbidden)
		}
	}
	if !Visible(*shared, bob) || Visible(*personal, bob) || !Visible(*personal, alice) {
		t.Error("visibility")
	}
	if CheckCanAdd(MaxPerOwner-1) != nil || !errors.Is(CheckCanAdd(MaxPerOwner), ErrLimitReached) {
		t.Error("limit")
	}
}
