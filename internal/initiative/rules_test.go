package initiative

import (
	"errors"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

func TestCheckCreate(t *testing.T) {
	if err := CheckCanCreate(MaxLive - 1); err != nil {
		t.Errorf("the 1,000th: %v", err)
	}
	if err := CheckCanCreate(MaxLive); !errors.Is(err, ErrLiveLimit) {
		t.Errorf("the 1,001st: %v", err)
	}
	if CheckCreateStatus(nil) != nil || CheckCreateStatus(new(Draft)) != nil {
		t.Error("no status, or draft, is how an initiative starts")
	}
	err := CheckCreateStatus(new(Active))
	verrs, ok := errors.AsType[validation.Errors](err)
	if !ok || len(verrs) != 1 || verrs[0].Field != "status" || verrs[0].Code != validation.CodeInvalidValue {
		t.Errorf("created active: %v", err)
	}
}

func TestOwnerWritableProjects(t *testing.T) {
	if Owner(nil, "creator") != "creator" || Owner(new("boss"), "creator") != "boss" {
		t.Error("owner default")
	}
	if !errors.Is(CheckWritable(Archived), ErrArchived) || CheckWritable(Completed) != nil {
		t.Error("archived is read-only, completed is not")
	}
	if !ArchivesProjects(Archived) || ArchivesProjects(Completed) {
		t.Error("only archiving cascades to projects")
	}
	if CheckCanAddProject(MaxProjects-1) != nil || !errors.Is(CheckCanAddProject(MaxProjects), ErrProjectLimit) {
		t.Error("project cap")
	}
}

func TestMeasure(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	created, reviewed := now.Add(-30*24*time.Hour), now.Add(-49*time.Hour)
	a := Measure([]string{"active", "completed", "active", "archived"}, []time.Time{created, reviewed}, now)
	if a != (Activity{ProjectsTotal: 4, ProjectsActive: 2, StatusChanges: 1, DaysInCurrentState: 2}) {
		t.Errorf("%+v", a)
	}
	if a := Measure(nil, nil, now); a != (Activity{}) {
		t.Errorf("nothing: %+v", a)
	}
}
