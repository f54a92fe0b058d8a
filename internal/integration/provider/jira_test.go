package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

const initiativeID = "0b6f3f5e-8a7d-4c1e-9f3a-2d5b6c7e8f90"

func jiraCfg(j *providertest.Jira) map[string]any {
	return map[string]any{"instance_url": j.URL, "initiative_id": initiativeID, "project_key": "VC", "email": j.Email(), "page_size": 100, "lookback_minutes": 0}
}

func TestJiraPagesEveryEpicOnce(t *testing.T) {
	j := providertest.NewJira(t, providertest.Options{Records: 1000})
	r := drain(t, newClient(t, provider.Jira, jiraCfg(j), j.Token()), "")
	got := ids(t, r.items)
	if len(got) != 1000 || r.pages != 10 || j.Requests() != 10 {
		t.Fatalf("%d epics, %d pages, %d requests; want 1000, 10, 10 (no /myself without since)", len(got), r.pages, j.Requests())
	}
	for _, i := range []int{0, 1, 2, 999} {
		it := got[providertest.JiraID(i)]
		want := provider.ProjectFields{Key: providertest.JiraKey(i), Name: fmt.Sprintf("Epic %d", i), Status: providertest.JiraStatuses[i%3]}
		if it.Project == nil || *it.Project != want || !it.ModifiedAt.Equal(j.Modified(i)) {
			t.Fatalf("epic %d: %+v at %s, want %+v at %s", i, it.Project, it.ModifiedAt, want, j.Modified(i))
		}
	}
	if want := j.Modified(999).Format(time.RFC3339); r.watermark != want {
		t.Fatalf("watermark %s, want %s", r.watermark, want)
	}
	if jql := j.LastJQL(); jql != `(issuetype = Epic) AND project = "VC" ORDER BY updated ASC, key ASC` {
		t.Fatalf("jql %q", jql)
	}
}

// JQL dates are read in the user's zone: since 05:00Z is written 06:00 for
// a Europe/Berlin user in January, 14:00 for Asia/Tokyo, 21:00 the day
// before for America/Los_Angeles.
func TestJiraIncrementalInTheUsersTimeZone(t *testing.T) {
	for zone, wall := range map[string]string{"Europe/Berlin": "2026-01-01 06:00", "Asia/Tokyo": "2026-01-01 14:00", "America/Los_Angeles": "2025-12-31 21:00"} {
		t.Run(zone, func(t *testing.T) {
			j := providertest.NewJira(t, providertest.Options{Records: 300, TimeZone: zone})
			c := newClient(t, provider.Jira, jiraCfg(j), j.Token())
			since := j.Modified(299) // record i at 2026-01-01T00:00Z + (i+1) minutes: 05:00Z
			later := since.Add(time.Hour)
			j.Touch(later, 3, 4)
			r := drain(t, c, since.Format(time.RFC3339))
			got := ids(t, r.items)
			// 299 itself (>=) and the two touched.
			if len(got) != 3 || got[providertest.JiraID(3)].Project == nil || got[providertest.JiraID(299)].Project == nil {
				t.Fatalf("incremental: %v", keys(got))
			}
			if jql := j.LastJQL(); !strings.Contains(jql, `updated >= "`+wall+`"`) {
				t.Fatalf("jql %q, want the since in %s wall time %s", jql, zone, wall)
			}
			if r.watermark != later.Format(time.RFC3339) {
				t.Fatalf("watermark %s", r.watermark)
			}
		})
	}
}

func TestJiraBearerAndErrors(t *testing.T) {
	j := providertest.NewJira(t, providertest.Options{Records: 10})
	ctx := context.Background()

	_, err := newClient(t, provider.Jira, jiraCfg(j), "ATATT-wrong").Fetch(ctx, "", "")
	wantUnauthorized(t, err, "ATATT-wrong")

	c := newClient(t, provider.Jira, jiraCfg(j), j.Token())
	j.Fail(providertest.Failure{Count: 1, Status: 429, RetryAfter: "2"})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 429, 2*time.Second)

	j.Fail(providertest.Failure{Count: 1, Status: 500})
	_, err = c.Fetch(ctx, "", "")
	wantRetryable(t, err, 500, 0)

	other := jiraCfg(j)
	other["project_key"] = "NOPE"
	_, err = newClient(t, provider.Jira, other, j.Token()).Fetch(ctx, "", "")
	if err == nil || !strings.Contains(err.Error(), "The value 'NOPE' does not exist for the field 'project'.") || strings.Contains(err.Error(), j.Token()) {
		t.Fatalf("unknown project: %v", err)
	}
}
