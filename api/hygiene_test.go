package api_test

import (
	"strings"
	"testing"
)

// fieldErrorCode returns errors[0] of a 422 as field and code.
func fieldErrorCode(t *testing.T, r response) (string, string) {
	t.Helper()
	errs, ok := r.json(t)["error"].(map[string]any)["errors"].([]any)
	if !ok || len(errs) == 0 {
		t.Fatalf("no errors[]: %s", r.body)
	}
	e := errs[0].(map[string]any)
	return e["field"].(string), e["code"].(string)
}

// Regression: an empty body was taken as {} (a 200 no-op PATCH), and
// bytes that are not UTF-8 or lone surrogate escapes were stored as U+FFFD.
func TestBodyMustBeOneUTF8JSONObject(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus", allowPrivate)
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Before"})
	user := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "ada@example.com", "name": "Ada"})
	expect(t, user, 201)
	role := ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Auditor", "permissions": []string{"initiatives:read"}})
	expect(t, role, 201)
	rc := newHookReceiver(t, 200)
	hook := ts.do(&admin, "POST", "/v1/webhooks", map[string]any{"url": rc.URL, "events": []string{"initiative.created"}, "secret": hookSecret})
	expect(t, hook, 201)

	targets := []struct{ method, path string }{
		{"POST", "/v1/initiatives"},
		{"PUT", "/v1/initiatives/" + id},
		{"PATCH", "/v1/initiatives/" + id},
		{"POST", "/v1/initiatives/" + id + "/status"},
		{"PATCH", "/v1/users/" + user.json(t)["id"].(string)},
		{"PATCH", "/v1/roles/" + role.json(t)["id"].(string)},
		{"PATCH", "/v1/webhooks/" + hook.json(t)["id"].(string)},
	}
	for _, tg := range targets {
		for name, body := range map[string]string{
			"empty":                  "",
			"white space only":       " \r\n\t ",
			"invalid UTF-8":          "{\"name\":\"a\xff\xfeb\"}",
			"invalid UTF-8 in a key": "{\"na\xffme\":\"a\"}",
			"lone high surrogate":    `{"name":"a\ud800b"}`,
			"high then no low":       `{"name":"\ud800\u0041"}`,
			"lone low surrogate":     `{"name":"\udc00"}`,
			"high at the end":        `{"name":"\ud83d"}`,
		} {
			r := ts.do(&admin, tg.method, tg.path, body)
			if r.status != 400 || r.errorCode(t) != "INVALID_PARAMETER" {
				t.Errorf("%s %s with %s body: %d %s", tg.method, tg.path, name, r.status, r.body)
			}
		}
	}
	if got := ts.do(&admin, "GET", "/v1/initiatives/"+id, nil).json(t)["name"]; got != "Before" {
		t.Fatalf("a refused body changed the initiative: name %v", got)
	}
	// A surrogate pair is one character, and an escaped backslash before "u" is not an escape.
	r := ts.do(&admin, "PATCH", "/v1/initiatives/"+id, `{"name":"Smile \ud83d\ude00","description":"C:\\udc00"}`)
	expect(t, r, 200)
	if got := r.json(t); got["name"] != "Smile \U0001F600" || got["description"] != `C:\udc00` {
		t.Fatalf("escapes decoded wrongly: %s", r.body)
	}
}

// Regression: control characters, bidi overrides and names made only of
// invisible characters were stored.
func TestTextHygiene(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	admin := ts.admin()
	for name, in := range map[string]string{
		"zero-width only":        "\u200b\u200c\u200d",
		"word joiner and BOM":    " \u2060\ufeff ",
		"Hangul filler":          "\u3164",
		"right-to-left override": "invoice\u202Etxt.exe",
		"isolate":                "a\u2066b",
		"escape":                 "red\x1b[31m",
		"line break":             "two\r\nlines",
		"tab":                    "a\tb",
		"C1 control":             "a\u0085b",
		"line separator":         "a\u2028b",
	} {
		r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": in})
		expect(t, r, 422, "VALIDATION_ERROR")
		if field, code := fieldErrorCode(t, r); field != "name" || code != "invalid_characters" {
			t.Errorf("name %s: errors[0] = %s/%s: %s", name, field, code, r.body)
		}
	}
	// Short fields are single-line too; free text may hold tabs and line breaks, never bidi overrides or escapes.
	for field, in := range map[string]string{"industry": "fin\ntech", "owner_id": "\u200b", "description": "a\u202Eb", "segment": "\x07"} {
		r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Fine " + field, field: in})
		expect(t, r, 422, "VALIDATION_ERROR")
		if f, code := fieldErrorCode(t, r); f != field || code != "invalid_characters" {
			t.Errorf("%s %q: errors[0] = %s/%s", field, in, f, code)
		}
	}
	desc := "Line one\r\n\tLine two \u200d joined, \u05e9\u05dc\u05d5\u05dd \u200f marks and emoji \U0001F469\u200D\U0001F4BB"
	r := ts.do(&admin, "POST", "/v1/initiatives", map[string]any{"name": "Caf\u00e9 \u0645\u0631\u062d\u0628\u0627", "description": desc})
	expect(t, r, 201)
	if r.json(t)["description"] != desc {
		t.Fatalf("free text altered: %s", r.body)
	}
	id := r.json(t)["id"].(string)
	r = ts.do(&admin, "POST", "/v1/initiatives/"+id+"/status", map[string]any{"status": "in_review", "reason": "see \x1b]8;;http://evil\x07link"})
	expect(t, r, 422, "VALIDATION_ERROR")

	// Users, roles: the same rule through the same reader.
	u := ts.do(&admin, "POST", "/v1/users", map[string]any{"email": "ada@example.com", "name": "Ada"})
	expect(t, u, 201)
	r = ts.do(&admin, "PATCH", "/v1/users/"+u.json(t)["id"].(string), map[string]any{"name": "Ada\u202E"})
	expect(t, r, 422, "VALIDATION_ERROR")
	if _, code := fieldErrorCode(t, r); code != "invalid_characters" {
		t.Errorf("user name with a bidi override: %s", r.body)
	}

	// Role names: documented to start with a letter or digit, so surrounding
	// spaces are refused rather than silently trimmed.
	for _, name := range []string{" Ops", "Ops ", "\u200bOps"} {
		r = ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": name, "permissions": []string{}})
		expect(t, r, 422, "VALIDATION_ERROR")
	}
	r = ts.do(&admin, "POST", "/v1/roles", map[string]any{"name": "Ops team", "permissions": []string{}})
	expect(t, r, 201)
	if r.json(t)["name"] != "Ops team" {
		t.Fatalf("role name: %s", r.body)
	}
	rid := r.json(t)["id"].(string)
	expect(t, ts.do(&admin, "PATCH", "/v1/roles/"+rid, map[string]any{"name": "  Ops team"}), 422, "VALIDATION_ERROR")
	if strings.TrimSpace(ts.do(&admin, "GET", "/v1/roles/"+rid, nil).json(t)["name"].(string)) != "Ops team" {
		t.Fatal("role renamed by a refused PATCH")
	}
}
