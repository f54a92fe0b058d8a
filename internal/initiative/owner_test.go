package initiative

import (
	"errors"
	"testing"
)

func TestCheckOwnerChange(t *testing.T) {
	admin := Actor{Subject: "root", Roles: []string{"Admin"}}
	alice := Actor{Subject: "alice"}
	bob := Actor{Subject: "bob", Roles: []string{"Executive", "Manager"}}
	cases := []struct {
		current, next string
		actor         Actor
		ok            bool
	}{
		{"alice", "alice", bob, true},  // unchanged
		{"alice", "bob", alice, true},  // the owner hands over
		{"alice", "", alice, true},     // the owner gives it up
		{"alice", "bob", admin, true},  // an Admin reassigns
		{"", "root", admin, true},      // an Admin assigns an ownerless one
		{"alice", "bob", bob, false},   // self-granting
		{"alice", "carol", bob, false}, // nor for someone else
		{"alice", "", bob, false},      // nor clearing
		{"", "bob", bob, false},        // nor claiming an ownerless one
		{"", "", bob, true},
	}
	for _, c := range cases {
		err := CheckOwnerChange(c.current, c.next, c.actor)
		if (err == nil) != c.ok {
			t.Errorf("%s changes owner %q → %q: %v, want ok=%v", c.actor.Subject, c.current, c.next, err, c.ok)
		}
		if err != nil {
			if _, typed := errors.AsType[*OwnerChangeError](err); !typed {
				t.Errorf("untyped error %T", err)
			}
		}
	}
}
