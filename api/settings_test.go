package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestContractSettings drives the settings and FX-rate operations through
// their success and error paths and validates every response against
// api/openapi.yaml; it also shows that one tenant's settings and rates never
// reach another.
func TestContractSettings(t *testing.T) {
	ts := newTestServer(t, "enterprise_plus")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read", "initiatives:write", "webhooks:manage"}}
	other := contractTenant(t, ts, "enterprise_plus")
	call := func(c contractCall) response { t.Helper(); return cc.call(t, c) }
	rates := func(entries ...map[string]any) map[string]any { return map[string]any{"rates": entries} }
	rate := func(cur, period string, r float64) map[string]any {
		return map[string]any{"currency": cur, "period": period, "rate": r}
	}

	// Defaults until saved.
	r := call(contractCall{as: &admin, method: "GET", path: "/v1/settings", want: 200})
	if m := r.json(t); m["base_currency"] != "USD" || m["discount_rate"] != 0.08 || m["fiscal_year_start_month"] != 1.0 || m["updated_at"] != nil {
		t.Errorf("defaults: %s", r.body)
	}
	// PUT replaces; absent fields take their defaults; the base changed, so rates are cleared.
	r = call(contractCall{as: &admin, method: "PUT", path: "/v1/settings", want: 200, body: map[string]any{"base_currency": "EUR", "fiscal_year_start_month": 4}})
	if m := r.json(t); m["base_currency"] != "EUR" || m["discount_rate"] != 0.08 || m["fiscal_year_start_month"] != 4.0 || m["fx_rates_cleared"] != true || m["updated_at"] == nil {
		t.Errorf("PUT: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "PUT", path: "/v1/settings", want: 200, body: map[string]any{
		"base_currency": "EUR", "discount_rate": 0.1, "fiscal_year_start_month": 4, "updated_at": "ignored", "fx_rates_cleared": true,
	}})
	if m := r.json(t); m["discount_rate"] != 0.1 || m["fx_rates_cleared"] != false {
		t.Errorf("PUT same base: %s", r.body)
	}

	// Rates against EUR: upserted, listed by currency then period, filtered.
	r = call(contractCall{as: &admin, method: "PUT", path: "/v1/settings/fx-rates", want: 200, body: rates(
		rate("USD", "2026-01", 0.92), rate("USD", "2026-02", 0.93), rate("GBP", "2026-01", 1.17), rate("JPY", "2026-01", 0.0061))})
	if m := r.json(t); m["base_currency"] != "EUR" || m["upserted"] != 4.0 {
		t.Errorf("PUT rates: %s", r.body)
	}
	call(contractCall{as: &admin, method: "PUT", path: "/v1/settings/fx-rates", want: 200, body: rates(rate("USD", "2026-02", 0.94))})
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates?page_size=500", want: 200})
	var got []string
	for _, d := range r.json(t)["data"].([]any) {
		m := d.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %v", m["currency"], m["period"], m["rate"]))
	}
	if want := "GBP 2026-01 1.17|JPY 2026-01 0.0061|USD 2026-01 0.92|USD 2026-02 0.94"; strings.Join(got, "|") != want {
		t.Errorf("rates = %v, want %s", got, want)
	}
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates?currency=USD&from=2026-02&to=2026-12", want: 200})
	if d := r.json(t)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["period"] != "2026-02" {
		t.Errorf("filtered: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates?page=3&page_size=2", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 4.0 || len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("past the last page: %s", r.body)
	}

	// Another tenant sees its defaults and no rates, and its writes stay its own.
	r = call(contractCall{as: &other, method: "GET", path: "/v1/settings", want: 200})
	if m := r.json(t); m["base_currency"] != "USD" || m["updated_at"] != nil {
		t.Errorf("tenant B sees: %s", r.body)
	}
	r = call(contractCall{as: &other, method: "GET", path: "/v1/settings/fx-rates", want: 200})
	if n := len(r.json(t)["data"].([]any)); n != 0 {
		t.Errorf("tenant B sees %d rates", n)
	}
	call(contractCall{as: &other, method: "PUT", path: "/v1/settings/fx-rates", want: 200, body: rates(rate("EUR", "2026-01", 1.08))})
	call(contractCall{as: &other, method: "PUT", path: "/v1/settings", want: 200, body: map[string]any{"base_currency": "GBP"}})
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates?currency=USD", want: 200})
	if n := len(r.json(t)["data"].([]any)); n != 2 {
		t.Errorf("tenant B's base change touched tenant A's rates: %d USD rates left", n)
	}

	// 422: each rule names its field.
	for _, c := range []struct {
		path       string
		body       any
		field      string
		code       string
		docRejects bool
	}{
		{"/v1/settings", map[string]any{"discount_rate": 8}, "discount_rate", "out_of_range", true},
		{"/v1/settings", map[string]any{"discount_rate": -0.01}, "discount_rate", "out_of_range", true},
		{"/v1/settings", map[string]any{"fiscal_year_start_month": 13}, "fiscal_year_start_month", "out_of_range", true},
		{"/v1/settings", map[string]any{"fiscal_year_start_month": 1.5}, "fiscal_year_start_month", "invalid_type", true},
		{"/v1/settings", map[string]any{"base_currency": "eur"}, "base_currency", "invalid_value", true},
		{"/v1/settings", map[string]any{"base_currency": "XYZ"}, "base_currency", "invalid_value", false},
		{"/v1/settings", map[string]any{"timezone": "UTC"}, "timezone", "unknown_field", true},
		{"/v1/settings/fx-rates", map[string]any{}, "rates", "required", true},
		{"/v1/settings/fx-rates", rates(), "rates", "required", true},
		{"/v1/settings/fx-rates", map[string]any{"rates": "USD=0.9"}, "rates", "invalid_type", true},
		{"/v1/settings/fx-rates", map[string]any{"rates": []any{"USD"}}, "rates[0]", "invalid_type", true},
		{"/v1/settings/fx-rates", rates(rate("EUR", "2026-01", 1)), "rates[0].currency", "not_allowed", false}, // EUR is the base
		{"/v1/settings/fx-rates", rates(rate("USD", "2026-01", 0.9), rate("USD", "2026-1", 0.9)), "rates[1].period", "invalid_format", true},
		{"/v1/settings/fx-rates", rates(rate("USD", "2026-01", 0)), "rates[0].rate", "out_of_range", true},
		{"/v1/settings/fx-rates", rates(rate("USD", "2026-01", 0.9), rate("GBP", "2026-01", 1.1), rate("USD", "2026-01", 0.91)), "rates[2].period", "duplicate", false},
		{"/v1/settings/fx-rates", rates(map[string]any{"currency": "USD", "period": "2026-01", "rate": 0.9, "source": "ecb"}), "rates[0].source", "unknown_field", true},
		{"/v1/settings/fx-rates", rates(map[string]any{"currency": "USD", "period": "2026-01"}), "rates[0].rate", "required", true},
		{"/v1/settings/fx-rates", map[string]any{"rates": manyRates(10_001)}, "rates", "too_many", true},
	} {
		r := call(contractCall{as: &admin, method: "PUT", path: c.path, body: c.body, want: 422, code: "VALIDATION_ERROR", docRejects: c.docRejects, docSkip: !c.docRejects})
		if r.status == 422 {
			e := r.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any)
			if e["field"] != c.field || e["code"] != c.code {
				t.Errorf("%s %.80v: first error %v, want %s/%s", c.path, c.body, e, c.field, c.code)
			}
		}
	}
	// Nothing of a refused request was saved; 10,000 rates are accepted.
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates?currency=USD", want: 200})
	if n := len(r.json(t)["data"].([]any)); n != 2 {
		t.Errorf("a refused PUT changed the rates: %d USD rates", n)
	}
	r = call(contractCall{as: &admin, method: "PUT", path: "/v1/settings/fx-rates", want: 200, body: map[string]any{"rates": manyRates(10_000)}})
	if r.json(t)["upserted"] != 10_000.0 {
		t.Errorf("10,000 rates: %s", r.body)
	}

	// A new base currency clears every stored rate.
	r = call(contractCall{as: &admin, method: "PUT", path: "/v1/settings", want: 200, body: map[string]any{"base_currency": "USD"}})
	if r.json(t)["fx_rates_cleared"] != true {
		t.Errorf("base change: %s", r.body)
	}
	r = call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates", want: 200})
	if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != 0.0 {
		t.Errorf("rates left after the base changed: %s", r.body)
	}

	// 400.
	for q, docRejects := range map[string]bool{"currency=usd": true, "currency=XYZ": false, "from=2026-13": true, "to=1999-12": false,
		"from=2026-05&to=2026-04": false, "page_size=501": true, "base=USD": false} {
		call(contractCall{as: &admin, method: "GET", path: "/v1/settings/fx-rates?" + q, want: 400, code: "INVALID_PARAMETER", docRejects: docRejects, docSkip: !docRejects})
	}
	call(contractCall{as: &admin, method: "GET", path: "/v1/settings?verbose=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "PUT", path: "/v1/settings", body: `{"base_currency":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
	call(contractCall{as: &admin, method: "PUT", path: "/v1/settings/fx-rates", body: `[]`, want: 400, code: "INVALID_PARAMETER", docSkip: true})

	ops := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/settings", nil},
		{"PUT", "/v1/settings", map[string]any{}},
		{"GET", "/v1/settings/fx-rates", nil},
		{"PUT", "/v1/settings/fx-rates", rates(rate("EUR", "2026-01", 1.1))},
	}
	for _, op := range ops {
		call(contractCall{as: &admin, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ""}, want: 400, code: "INVALID_PARAMETER"})
		call(contractCall{method: op.method, path: op.path, body: op.body, want: 401, code: "AUTHORIZATION_ERROR"})
		call(contractCall{as: &reader, method: op.method, path: op.path, body: op.body, want: 403, code: "AUTHORIZATION_ERROR"}) // admin:config only
		call(contractCall{as: &other, method: op.method, path: op.path, body: op.body, headers: []string{"X-Tenant-ID", ts.tenant.String()}, want: 403, code: "AUTHORIZATION_ERROR"})
	}
	big := `{"base_currency":"` + strings.Repeat("a", 6<<20) + `"}`
	for _, op := range []string{"/v1/settings", "/v1/settings/fx-rates"} {
		call(contractCall{as: &admin, method: "PUT", path: op, body: big, want: 413, network: true, code: "INVALID_PARAMETER"})
		call(contractCall{as: &admin, method: "PUT", path: op, body: `{}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
	}

	// 429 for a starter tenant over its burst, then 503 with the database gone.
	calls := make([]contractCall, len(ops))
	for i, op := range ops {
		calls[i] = contractCall{method: op.method, path: op.path, body: op.body}
	}
	cc.preconditions(t, admin, calls) // ETag: 304 and the 409 of a stale If-Match
	cc.limitsAndOutage(t, ts, admin, "/v1/settings", calls)

	for _, u := range cc.uncovered([]string{"settings"}, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// manyRates is n distinct USD and GBP rates, month after month from 2000-01.
func manyRates(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		cur := []string{"USD", "GBP", "JPY", "CHF", "CAD", "AUD", "SEK", "NOK", "DKK", "PLN"}[i%10]
		m := i / 10
		out[i] = map[string]any{"currency": cur, "period": fmt.Sprintf("%04d-%02d", 2000+m/12, m%12+1), "rate": 1 + float64(i)/1e5}
	}
	return out
}
