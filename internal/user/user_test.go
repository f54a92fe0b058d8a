package user

import (
	"errors"
	"testing"

	"github.com/valuecase/valuecase/internal/rbac"
)

func TestCheckKeepsAdmin(t *testing.T) {
	admin := []string{"Analyst", rbac.RoleAdmin}
	cases := []struct {
		name   string
		status Status
		roles  []string
		others int64
		want   error
	}{
		{"the last active Admin", Active, admin, 0, ErrLastAdmin},
		{"another Admin remains", Active, admin, 1, nil},
		{"not an Admin", Active, []string{"Analyst"}, 0, nil},
		{"an invited Admin does not count", Invited, admin, 0, nil},
		{"a deactivated Admin does not count", Deactivated, admin, 0, nil},
	}
	for _, c := range cases {
		if got := CheckKeepsAdmin(c.status, c.roles, c.others); !errors.Is(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLifecycleChecks(t *testing.T) {
	if err := CheckDeactivate(Deactivated); !errors.Is(err, ErrWrongStatus) {
		t.Errorf("deactivate twice: %v", err)
	}
	if err := CheckDeactivate(Active); err != nil {
		t.Errorf("deactivate active: %v", err)
	}
	if err := CheckReactivate(Active); !errors.Is(err, ErrWrongStatus) || err.Error() != "wrong status: the user is active, not deactivated" {
		t.Errorf("reactivate active: %v", err)
	}
	if err := CheckReactivate(Deactivated); err != nil {
		t.Errorf("reactivate deactivated: %v", err)
	}
}
