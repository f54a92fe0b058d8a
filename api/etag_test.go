package api_test

import (
	"fmt"
	"regexp"
	"sync"
	"testing"
)

// etagGroup is one resource group's single record under optimistic locking.
type etagGroup struct {
	name string
	// setup creates the record and returns its path and first ETag (from the
	// GET, or from the create answer where there is no GET of one record).
	setup func(t *testing.T, ts *testServer, admin caller) (path, etag string)
	// read returns the record as stored now (the GET, or its list row).
	read func(t *testing.T, ts *testServer, admin caller, path string) map[string]any
	// method and change write the record: change(i) sets field to want(i).
	method string
	change func(i int) map[string]any
	field  string
	want   func(i int) any
	del    bool // DELETE honours If-Match too (and removes or archives)
}

// strongETag is what every record ETag looks like: strong, quoted, version.digest.
var strongETag = regexp.MustCompile(`^"[0-9a-z]+\.[A-Za-z0-9_-]+"$`)

func etagGet(t *testing.T, ts *testServer, admin caller, path string) map[string]any {
	t.Helper()
	r := ts.do(&admin, "GET", path, nil)
	expect(t, r, 200)
	return r.json(t)
}

func etagGroups() []etagGroup {
	text := func(field string) (func(int) map[string]any, func(int) any) {
		return func(i int) map[string]any { return map[string]any{field: fmt.Sprintf("v%d", i)} },
			func(i int) any { return fmt.Sprintf("v%d", i) }
	}
	created := func(t *testing.T, ts *testServer, admin caller, method, path string, body map[string]any) map[string]any {
		t.Helper()
		r := ts.do(&admin, method, path, body)
		expect(t, r, 201)
		return r.json(t)
	}
	viaGet := func(t *testing.T, ts *testServer, admin caller, path string) (string, string) {
		t.Helper()
		r := ts.do(&admin, "GET", path, nil)
		expect(t, r, 200)
		return path, r.header.Get("ETag")
	}
	initiative := func(t *testing.T, ts *testServer, admin caller) string {
		return ts.createInitiative(admin, map[string]any{"name": "Locked " + t.Name()})
	}
	var groups []etagGroup
	add := func(g etagGroup, field string) {
		if g.change == nil {
			g.change, g.want = text(field)
		}
		if g.read == nil {
			g.read = etagGet
		}
		if g.method == "" {
			g.method = "PATCH"
		}
		g.field = field
		groups = append(groups, g)
	}
	add(etagGroup{name: "initiatives", del: true, setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
		return viaGet(t, ts, admin, "/v1/initiatives/"+initiative(t, ts, admin))
	}}, "description")
	add(etagGroup{name: "benefits", del: true, setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
		return viaGet(t, ts, admin, "/v1/benefits/"+ts.createBenefit(admin, benefitBody(initiative(t, ts, admin), "Savings")))
	}}, "description")
	add(etagGroup{name: "costs", del: true,
		setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
			in := initiative(t, ts, admin)
			r := ts.do(&admin, "POST", "/v1/initiatives/"+in+"/costs", map[string]any{"name": "Build", "category": "capex", "amount": 1000, "currency": "EUR", "period": monthsAgo(6)})
			expect(t, r, 201)
			return "/v1/initiatives/" + in + "/costs/" + r.json(t)["id"].(string), r.header.Get("ETag") // no GET of one cost
		},
		read: func(t *testing.T, ts *testServer, admin caller, path string) map[string]any {
			t.Helper()
			list, id := path[:len(path)-37], path[len(path)-36:]
			for _, row := range etagGet(t, ts, admin, list)["data"].([]any) {
				if m := row.(map[string]any); m["id"] == id {
					return m
				}
			}
			t.Fatalf("cost %s is not listed", id)
			return nil
		}}, "name")
	add(etagGroup{name: "stakeholders", del: true, setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
		s := created(t, ts, admin, "POST", "/v1/stakeholders", map[string]any{"initiative_id": initiative(t, ts, admin), "name": "Grace",
			"email": "grace@example.com", "influence": "high", "interest": "low"})
		return viaGet(t, ts, admin, "/v1/stakeholders/"+s["id"].(string))
	}}, "notes")
	add(etagGroup{name: "business cases", del: true, setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
		bc := created(t, ts, admin, "POST", "/v1/business-cases", businessCaseBody(initiative(t, ts, admin), "Case"))
		return viaGet(t, ts, admin, "/v1/business-cases/"+bc["id"].(string))
	}}, "name")
	var hookURL string
	add(etagGroup{name: "webhooks", del: true,
		setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
			hookURL = newHookReceiver(t, 200).URL
			return viaGet(t, ts, admin, "/v1/webhooks/"+ts.createWebhook(admin, hookURL, "initiative.created")["id"].(string))
		},
		change: func(i int) map[string]any { return map[string]any{"url": fmt.Sprintf("%s/v%d", hookURL, i)} },
		want:   func(i int) any { return fmt.Sprintf("%s/v%d", hookURL, i) }}, "url")
	add(etagGroup{name: "users", setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
		u := created(t, ts, admin, "POST", "/v1/users", map[string]any{"email": "ada@example.com", "name": "Ada"})
		return viaGet(t, ts, admin, "/v1/users/"+u["id"].(string))
	}}, "name")
	add(etagGroup{name: "roles", del: true, setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
		r := created(t, ts, admin, "POST", "/v1/roles", map[string]any{"name": "Auditor", "permissions": []string{"initiatives:read"}})
		return viaGet(t, ts, admin, "/v1/roles/"+r["id"].(string))
	}}, "description")
	add(etagGroup{name: "settings", method: "PUT",
		setup: func(t *testing.T, ts *testServer, admin caller) (string, string) {
			return viaGet(t, ts, admin, "/v1/settings")
		},
		change: func(i int) map[string]any {
			return map[string]any{"base_currency": "EUR", "discount_rate": float64(i) / 100, "fiscal_year_start_month": 1}
		},
		want: func(i int) any { return float64(i) / 100 }}, "discount_rate")
	return groups
}

// TestETagOptimisticLocking: for every group, a single record's GET gives a
// strong ETag and honours If-None-Match; a write with a stale If-Match is a
// 409 CONFLICT that leaves the record as it was, with the current one it is
// a 200 carrying the new ETag, "*" matches, a malformed header is a 400, and
// two writes racing with the same ETag end as one 200 and one 409.
func TestETagOptimisticLocking(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate) // negotiated limits: no per-endpoint limit in the way
	admin := ts.admin()
	other := contractTenant(t, ts, "enterprise_plus")
	for _, g := range etagGroups() {
		t.Run(g.name, func(t *testing.T) {
			path, first := g.setup(t, ts, admin)
			if !strongETag.MatchString(first) {
				t.Fatalf("ETag %q is not a strong record tag", first)
			}
			if g.name != "costs" {
				r := ts.do(&admin, "GET", path, nil, "If-None-Match", first)
				expect(t, r, 304)
				if len(r.body) != 0 || r.header.Get("ETag") != first {
					t.Fatalf("304 must be empty and carry the ETag: %q %s", r.header.Get("ETag"), r.body)
				}
				expect(t, ts.do(&admin, "GET", path, nil, "If-None-Match", `"0.other"`), 200)
			}

			// The current tag writes and answers with the next one.
			r := ts.do(&admin, g.method, path, g.change(1), "If-Match", first)
			expect(t, r, 200)
			second := r.header.Get("ETag")
			if !strongETag.MatchString(second) || second == first {
				t.Fatalf("write answered ETag %q after %q: want a new strong tag", second, first)
			}
			if got := r.json(t)[g.field]; got != g.want(1) {
				t.Fatalf("%s = %v after the write, want %v", g.field, got, g.want(1))
			}
			// The first tag is stale now: 409 and nothing changes.
			r = ts.do(&admin, g.method, path, g.change(2), "If-Match", first)
			expect(t, r, 409, "CONFLICT")
			if got := g.read(t, ts, admin, path)[g.field]; got != g.want(1) {
				t.Fatalf("a stale If-Match changed %s to %v", g.field, got)
			}
			// A list that names the current tag matches; a weak one never does (strong comparison).
			expect(t, ts.do(&admin, g.method, path, g.change(2), "If-Match", `"0.x", W/`+second), 409, "CONFLICT")
			r = ts.do(&admin, g.method, path, g.change(3), "If-Match", `"0.x", `+second)
			expect(t, r, 200)
			expect(t, ts.do(&admin, g.method, path, g.change(4), "If-Match", "*"), 200)
			for _, bad := range []string{"abc", `"unterminated`, `"a" "b"`} {
				expect(t, ts.do(&admin, g.method, path, g.change(5), "If-Match", bad), 400, "INVALID_PARAMETER")
			}
			// No If-Match: last write wins, as before.
			expect(t, ts.do(&admin, g.method, path, g.change(6)), 200)
			// Another tenant's record is not found, whatever tag it names.
			if g.name != "settings" {
				expect(t, ts.do(&other, g.method, path, g.change(7), "If-Match", first), 404, "NOT_FOUND")
			}

			// Two writes racing with the same tag: the row lock orders them, the second sees a new version.
			for round := range 5 {
				tag := ts.do(&admin, "GET", path, nil).header.Get("ETag")
				if g.name == "costs" {
					tag = ts.do(&admin, g.method, path, g.change(10+round)).header.Get("ETag")
				}
				statuses := make([]int, 2)
				var wg sync.WaitGroup
				for i := range 2 {
					wg.Go(func() { statuses[i] = ts.do(&admin, g.method, path, g.change(20+2*round+i), "If-Match", tag).status })
				}
				wg.Wait()
				if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
					t.Fatalf("round %d: two writes with one ETag answered %v, want one 200 and one 409", round, statuses)
				}
			}

			if g.del {
				cur := ts.do(&admin, g.method, path, g.change(40)).header.Get("ETag")
				expect(t, ts.do(&admin, "DELETE", path, nil, "If-Match", first), 409, "CONFLICT")
				if got := g.read(t, ts, admin, path)[g.field]; got != g.want(40) {
					t.Fatalf("a stale DELETE changed the record: %s = %v", g.field, got)
				}
				expect(t, ts.do(&admin, "DELETE", path, nil, "If-Match", cur), 204)
			}
		})
	}
	// Keys and clients are never edited: a tag of another version fails, theirs deletes.
	for _, c := range []struct{ path, body string }{
		{"/v1/api-keys", `{"name":"ci","scopes":["initiatives:read"]}`},
		{"/v1/service-clients", `{"name":"ci","permissions":["initiatives:read"]}`},
	} {
		r := ts.do(&admin, "POST", c.path, c.body)
		expect(t, r, 201)
		path := c.path + "/" + r.json(t)["id"].(string)
		r = ts.do(&admin, "GET", path, nil)
		expect(t, r, 200)
		tag := r.header.Get("ETag")
		if !strongETag.MatchString(tag) {
			t.Fatalf("%s: ETag %q", path, tag)
		}
		expect(t, ts.do(&admin, "GET", path, nil, "If-None-Match", tag), 304)
		expect(t, ts.do(&admin, "DELETE", path, nil, "If-Match", `"0.x"`), 409, "CONFLICT")
		expect(t, ts.do(&admin, "GET", path, nil), 200)
		expect(t, ts.do(&admin, "DELETE", path, nil, "If-Match", tag), 204)
		expect(t, ts.do(&admin, "GET", path, nil), 404)
	}
}
