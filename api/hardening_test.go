package api_test

import (
	"testing"

	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

// A NUL in any text a business case carries (PostgreSQL text cannot hold it)
// is a 422 on the field, on create, PUT and PATCH alike, never a 500.
func TestNULInBusinessCaseText(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "NUL target"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Clean case"))
	expect(t, r, 201)
	path := "/v1/business-cases/" + r.json(t)["id"].(string)
	withNUL := func(title, text string) map[string]any {
		b := businessCaseBody(initID, "Case")
		b["content"] = map[string]any{"executive_summary": map[string]any{"title": title, "body": text}}
		return b
	}
	for _, tc := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"POST", "/v1/business-cases", withNUL("Why\u0000now", "fine"), "content.executive_summary.title"},
		{"POST", "/v1/business-cases", withNUL("Why now", "nul\u0000body"), "content.executive_summary.body"},
		{"PUT", path, withNUL("Why\u0000now", "fine"), "content.executive_summary.title"},
		{"PATCH", path, map[string]any{"content": map[string]any{"financial_analysis": map[string]any{"body": "\u0000"}}}, "content.financial_analysis.body"},
		{"PATCH", path, map[string]any{"name": "a\u0000b"}, "name"},
	} {
		r := ts.do(&admin, tc.method, tc.path, tc.body)
		expect(t, r, 422, "VALIDATION_ERROR")
		if field, code := fieldErrorCode(t, r); field != tc.field || code != "invalid_value" {
			t.Errorf("%s %s: errors[0] = %s/%s, want %s/invalid_value", tc.method, tc.path, field, code, tc.field)
		}
	}
}

// PATCH of an integration refuses a blank name as PUT does (422 on name), never a 500.
func TestPatchIntegrationBlankName(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	admin := ts.admin()
	feed := providertest.NewFeed(t, providertest.Options{Records: 1})
	r := ts.do(&admin, "POST", "/v1/integrations", map[string]any{"provider": "http_feed", "name": "Feed",
		"config": map[string]any{"instance_url": feed.URL, "oauth_token": "patch-name-token-0123456789"}})
	expect(t, r, 201)
	path := "/v1/integrations/" + r.json(t)["id"].(string)
	for _, name := range []any{"", "   ", nil} {
		for _, method := range []string{"PATCH", "PUT"} {
			body := map[string]any{"name": name}
			if method == "PUT" {
				body["provider"], body["config"] = "http_feed", map[string]any{"instance_url": feed.URL}
			}
			r := ts.do(&admin, method, path, body)
			expect(t, r, 422, "VALIDATION_ERROR")
			if field, code := fieldErrorCode(t, r); field != "name" || code != "required" {
				t.Errorf("%s name %q: errors[0] = %s/%s", method, name, field, code)
			}
		}
	}
	if got := ts.do(&admin, "GET", path, nil).json(t)["name"]; got != "Feed" {
		t.Fatalf("name after refused writes: %v", got)
	}
}
