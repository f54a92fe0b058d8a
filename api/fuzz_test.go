package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/validation"
)

// Fuzz targets over the JSON body reader and the query parser, through the
// real app (app.Test) on a real database. `go test` runs the seed corpus (the
// f.Add calls and testdata/fuzz/<target>/); for a longer run:
//
//	go test -run '^$' -fuzz FuzzJSONBody -fuzztime 60s ./api/
//	go test -run '^$' -fuzz FuzzValueBody -fuzztime 10m ./api/
//	go test -run '^$' -fuzz FuzzQuery -fuzztime 10m ./api/
//
// FuzzValueBody sends bodies to every write route of the value side,
// FuzzQuery query strings to every value route that reads one.
//
// The property: never a 5xx; every 4xx is the spec's error body; and no
// error message carries input text, other than the field names reported in
// errors[].field and the service's own words (known field and parameter
// names, enum values, message templates).

// unlimited admits every request: fuzzing runs far past any plan's limits.
type unlimited struct{}

func (unlimited) Allow(_ context.Context, _ string, l ratelimit.Limit) (ratelimit.Result, error) {
	return ratelimit.Result{Limit: l, Allowed: true, Remaining: l.Burst}, nil
}

// messageCorpus holds the text fragments of every string literal of the code
// that composes error messages (this package, every package of internal/,
// encoding/json's syntax errors), split at format verbs: text of a message
// made of these is the service's own words, not an echo of the input.
var messageCorpus = sync.OnceValue(func() []string {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	seen := map[string]bool{}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		panic("go env GOROOT: " + err.Error())
	}
	dirs := []string{".", filepath.Join(strings.TrimSpace(string(goroot)), "src", "encoding", "json")}
	_ = filepath.WalkDir("../internal", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && (lit.Kind == token.STRING || lit.Kind == token.CHAR) {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						for _, frag := range verb.Split(v, -1) {
							if len(frag) >= 2 {
								seen[frag] = true
							}
						}
					}
				}
				return true
			})
		}
	}
	return slices.Collect(maps.Keys(seen))
})

// checkFuzzResponse asserts the property for one exchange.
func checkFuzzResponse(t *testing.T, input []byte, r response) {
	t.Helper()
	if r.status >= 500 {
		t.Fatalf("5xx for input %q: %d %s", input, r.status, r.body)
	}
	if r.status < 400 {
		return
	}
	var body struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
			Errors    []struct {
				Field, Code, Message string
			} `json:"errors"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Error.Code == "" || body.Error.Message == "" || body.Error.RequestID == "" {
		t.Fatalf("%d without the error body for input %q: %s", r.status, input, r.body)
	}
	if r.status == 422 && len(body.Error.Errors) == 0 {
		t.Fatalf("422 without errors[] for input %q: %s", input, r.body)
	}
	messages := []string{body.Error.Message}
	var fields []string
	for _, e := range body.Error.Errors {
		messages = append(messages, e.Message)
		fields = append(fields, e.Field)
	}
	for _, m := range messages {
		if leak := echoed(input, m, fields); leak != "" {
			t.Fatalf("input text %q echoed in message %q (input %q)", leak, m, input)
		}
	}
}

// echoed returns a run of 8 input bytes found in msg that is not entirely
// made of the service's own words (messageCorpus) or of the field names
// reported in errors[].field, or "".
func echoed(input []byte, msg string, fields []string) string {
	const window = 8
	own := make([]bool, len(msg)) // bytes of msg that are the service's text
	mark := func(frag string) {
		for from := 0; frag != "" && from < len(msg); {
			i := strings.Index(msg[from:], frag)
			if i < 0 {
				return
			}
			for j := from + i; j < from+i+len(frag); j++ {
				own[j] = true
			}
			from += i + 1
		}
	}
	for _, f := range fields {
		mark(f)
	}
	for _, frag := range messageCorpus() {
		mark(frag)
	}
	for i := 0; i+window <= len(input); i++ {
		w := string(input[i : i+window])
		for from := 0; from < len(msg); {
			at := strings.Index(msg[from:], w)
			if at < 0 {
				break
			}
			at += from
			if slices.Contains(own[at:at+window], false) {
				return w
			}
			from = at + 1
		}
	}
	return ""
}

// fuzzServer is the API on its own database, for the fuzz function's iterations.
func fuzzServer(f *testing.F) (*testServer, caller, string) {
	ts := newTestServer(f, "enterprise_plus", allowPrivate, func(d *api.Deps) { d.Limits = unlimited{} })
	admin := ts.admin()
	id := ts.createInitiative(admin, map[string]any{"name": "Fuzz target"})
	return ts, admin, id
}

// in binds the shared server to one fuzz iteration's *testing.T.
func (ts *testServer) in(t *testing.T) *testServer {
	c := *ts
	c.t = t
	return &c
}

func FuzzJSONBody(f *testing.F) {
	for _, seed := range []string{
		``, ` `, `{}`, `null`, `[]`, `"x"`, `1`, `{"name":"Alpha"}`, `{"name":"a"} {"name":"b"}`, `{"name":`,
		`{"name":"Alpha","description":"line\nbreak","industry":"fintech","segment":"smb","owner_id":"admin-1",` +
			`"expected_start_date":"2027-01-01","expected_end_date":"2027-12-31"}`,
		`{"name":"x","expected_start_date":"2027-06-01","expected_end_date":"2027-01-01"}`,
		`{"name":"x","expected_start_date":"2027-13-45"}`,
		`{"name":"x","status":"active"}`, `{"status":"in_review","reason":"go"}`,
		`{"name":null,"owner_id":null}`, `{"name":42}`, `{"name":["a"]}`, `{"name":{"a":1}}`,
		`{"name":"\u200b\u200c"}`, `{"name":"a\u202eb"}`, `{"name":"a\u001bb"}`, `{"name":"nul\u0000"}`,
		`{"name":"\ud800"}`, `{"name":"\ud83d\ude00"}`, `{"name":"\udc00\ud800"}`, "{\"name\":\"\xff\xfe\"}",
		`{"name":"x","colour":"red"}`, `{"unknown_field_name":"value of the unknown field"}`,
		`{"name":"` + strings.Repeat("n", 201) + `"}`, `{"name":"x","description":"` + strings.Repeat("d", 10_001) + `"}`,
		`{"name":"x","name":"y"}`, `{"name":1e999}`, `{"name":"x","id":"00000000-0000-0000-0000-000000000000","metrics":{}}`,
		"\xef\xbb\xbf{\"name\":\"bom\"}", `{"name":"a\\ud800"}`, `{"name":"\u0041\u030a"}`,
	} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(1))
	}
	ts, admin, id := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, route uint8) {
		ts := ts.in(t)
		method, path := "POST", "/v1/initiatives"
		if route%2 == 1 {
			method, path = "PATCH", "/v1/initiatives/"+id
		}
		r := ts.do(&admin, method, path, body)
		checkFuzzResponse(t, body, r)
		if r.status < 300 {
			checkStoredName(t, body, r)
		}
	})
}

// checkStoredName asserts that an accepted name passed the text rule and
// holds no U+FFFD the input did not hold (an invalid byte or lone surrogate replaced).
func checkStoredName(t *testing.T, input []byte, r response) {
	t.Helper()
	var got struct{ Name string }
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("%d is not JSON: %s", r.status, r.body)
	}
	if err := validation.Text("name", got.Name, false); err != nil {
		t.Fatalf("stored name %q breaks the text rule (%v); input %q", got.Name, err, input)
	}
	lower := bytes.ToLower(input)
	if strings.ContainsRune(got.Name, utf8.RuneError) && !bytes.Contains(input, []byte("\ufffd")) && !bytes.Contains(lower, []byte(`\ufffd`)) {
		t.Fatalf("stored name %q holds U+FFFD the input %q did not", got.Name, input)
	}
}

func FuzzQuery(f *testing.F) {
	for _, seed := range []string{
		``, `page=1&page_size=20`, `page=0`, `page=-1`, `page=99999999999999999999`, `page_size=201`, `page=1&page=2`,
		`sort=name&order=asc`, `sort=nope`, `order=sideways`, `status=archived`, `status=flying`, `industry=fintech`,
		`industry=`, `industry=` + strings.Repeat("i", 101), `status=%00`, `industry=%1b%5b31m`, `industry=%ff%fe`,
		`unknown_parameter_name=1`, `%zz=1`, `a=%`, `;;;`, `page=1;page_size=2`, `expand=all`, `page= 1`, `page=1e3`,
		`page_size=+5`, `page_size=0x10`, `industry=%e2%80%ae`, `sort=name&sort=status`,
	} {
		f.Add(seed, uint8(0))
		f.Add(seed, uint8(1))
	}
	ts, admin, id := fuzzServer(f)
	token := ts.token(admin)
	// Every value route that reads a query, the initiatives first (the seed corpus's route numbers).
	paths := []string{"/v1/initiatives", "/v1/initiatives/" + id}
	for _, r := range valueRoutes(f, ts, admin, id) {
		switch {
		case r.method == "PUT" && strings.HasPrefix(r.path, "/v1/dashboards/"):
			paths = append(paths, r.path, r.path+"/data")
		case r.method == "PUT" && strings.HasPrefix(r.path, "/v1/benefits/"):
			paths = append(paths, r.path, r.path+"/actuals", r.path+"/variance")
		case r.method == "PUT" && !strings.HasPrefix(r.path, "/v1/settings"):
			paths = append(paths, r.path) // GET of one record
		}
	}
	paths = append(paths, "/v1/analytics/roi", "/v1/analytics/realization", "/v1/analytics/trends", "/v1/analytics/forecasts",
		"/v1/analytics/benchmarks", "/v1/benefits", "/v1/stakeholders", "/v1/business-cases", "/v1/integrations", "/v1/webhooks",
		"/v1/dashboards", "/v1/dashboards/portfolio", "/v1/bulk/export", "/v1/bulk/jobs", "/v1/audit-events", "/v1/initiatives/"+id+"/costs",
		"/v1/settings/fx-rates")
	for _, seed := range []string{`period=` + strings.Repeat("2024Q9", 100), `period=%3Cscript%3Ealert(1)%3C%2Fscript%3E`, `from=2024-13&to=2024-01`,
		`group_by=%3Cb%3Eboldly`, `resource=%3Cscript%3E&format=xlsx`, `metric=%3Cscript%3Ealert`, `horizon=99999999999`, `initiative_id=not-a-uuid-at-all`} {
		for i := range paths {
			f.Add(seed, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, query string, route uint8) {
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return // not a request line a client sends (it would percent-encode these); the HTTP parser's refusals are TestParserRefusals*
		}
		path := paths[int(route)%len(paths)]
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path, req.URL.RawQuery = path, query
		req.RequestURI = ""
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Tenant-ID", admin.tenant.String())
		res, err := ts.srv.App().Test(req, int((10 * time.Second).Milliseconds()))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		checkFuzzResponse(t, []byte(query), response{status: res.StatusCode, header: res.Header, body: b.Bytes()})
	})
}

// valueRoute is one write route of the value side with a body that it accepts.
type valueRoute struct {
	method, path string
	valid        map[string]any
}

// valueRoutes creates one record of each kind and returns every value route
// that reads a body, each with a valid body (the seed the fuzzer mutates).
func valueRoutes(tb testing.TB, ts *testServer, admin caller, initID string) []valueRoute {
	created := func(path string, body map[string]any) string {
		tb.Helper()
		r := ts.do(&admin, "POST", path, body)
		expect(tb, r, 201)
		return r.json(tb)["id"].(string)
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	tb.Cleanup(receiver.Close)
	feed := providertest.NewFeed(tb, providertest.Options{Records: 1})

	cost := map[string]any{"name": "Licences", "category": "opex", "amount": 1000, "currency": "USD", "period": "2027-01", "recurrence": "monthly", "end_period": "2027-12"}
	ben := map[string]any{"initiative_id": initID, "name": "Savings", "category": "cost_savings", "unit": "currency",
		"measurement_frequency": "monthly", "expected_value": 120000, "expected_start_date": "2025-01-01", "currency": "USD"}
	sh := map[string]any{"initiative_id": initID, "name": "Ada", "email": "ada@example.com", "influence": "critical", "interest": "high"}
	bc := businessCaseBody(initID, "Fuzz case")
	integ := map[string]any{"provider": "http_feed", "name": "Feed", "config": map[string]any{"instance_url": feed.URL, "oauth_token": "fuzz-token-0123456789abcdef"},
		"sync_schedule": map[string]any{"frequency": "daily", "at": "02:00", "timezone": "Europe/Berlin"}}
	hook := map[string]any{"url": receiver.URL, "events": []string{"initiative.created", "benefit.actual_recorded"}, "secret": hookSecret}
	dash := map[string]any{"name": "Mine", "widgets": []any{
		map[string]any{"type": "roi", "title": "ROI", "params": map[string]any{"initiative_id": initID, "period": "2027"}},
		map[string]any{"type": "trends", "title": "Trends", "params": map[string]any{"from": "2027-01", "to": "2027-12", "group_by": "category"}}}}

	costID := created("/v1/initiatives/"+initID+"/costs", cost)
	benID := created("/v1/benefits", ben)
	shID := created("/v1/stakeholders", sh)
	bcID := created("/v1/business-cases", bc)
	integID := created("/v1/integrations", integ)
	hookID := created("/v1/webhooks", hook)
	dashID := created("/v1/dashboards", dash)
	statusInit := ts.createInitiative(admin, map[string]any{"name": "Fuzz status target"})
	bcPath, costPath := "/v1/business-cases/"+bcID, "/v1/initiatives/"+initID+"/costs/"+costID
	return []valueRoute{
		{"POST", "/v1/initiatives", map[string]any{"name": "Alpha", "industry": "fintech", "expected_start_date": "2027-01-01"}},
		{"PATCH", "/v1/initiatives/" + initID, map[string]any{"description": "Line\nbreak"}},
		{"PUT", "/v1/initiatives/" + initID, map[string]any{"name": "Fuzz target"}},
		{"POST", "/v1/initiatives/" + statusInit + "/status", map[string]any{"status": "in_review", "reason": "go"}},
		{"POST", "/v1/initiatives/" + initID + "/projects", map[string]any{"name": "Pilot"}},
		{"POST", "/v1/initiatives/" + initID + "/costs", cost},
		{"PUT", costPath, cost},
		{"PATCH", costPath, map[string]any{"amount": 2000}},
		{"POST", "/v1/benefits", ben},
		{"PUT", "/v1/benefits/" + benID, ben},
		{"PATCH", "/v1/benefits/" + benID, map[string]any{"expected_value": 1000, "currency": "EUR"}},
		{"POST", "/v1/benefits/" + benID + "/actuals", map[string]any{"value": 10, "period": "2025-02"}},
		{"POST", "/v1/stakeholders", sh},
		{"PUT", "/v1/stakeholders/" + shID, sh},
		{"PATCH", "/v1/stakeholders/" + shID, map[string]any{"interest": "low"}},
		{"POST", "/v1/stakeholders/" + shID + "/engagement", map[string]any{"type": "call", "sentiment": "positive", "date": "2026-01-05"}},
		{"POST", "/v1/business-cases", bc},
		{"PUT", bcPath, bc},
		{"PATCH", bcPath, map[string]any{"sections": []string{"executive_summary", "risk_assessment"}}},
		{"POST", bcPath + "/export", map[string]any{"format": "pdf", "include_appendices": true, "watermark": "Draft"}},
		{"POST", bcPath + "/versions", map[string]any{}},
		{"POST", "/v1/integrations", integ},
		{"PUT", "/v1/integrations/" + integID, integ},
		{"PATCH", "/v1/integrations/" + integID, map[string]any{"sync_schedule": map[string]any{"frequency": "weekly", "day_of_week": "monday", "at": "06:30", "timezone": "UTC"}}},
		{"POST", "/v1/webhooks", hook},
		{"PUT", "/v1/webhooks/" + hookID, hook},
		{"PATCH", "/v1/webhooks/" + hookID, map[string]any{"events": []string{"initiative.updated"}}},
		{"POST", "/v1/dashboards", dash},
		{"PUT", "/v1/dashboards/" + dashID, dash},
		{"PUT", "/v1/settings", map[string]any{"base_currency": "USD", "discount_rate": 0.1, "fiscal_year_start_month": 1}},
		{"PUT", "/v1/settings/fx-rates", map[string]any{"rates": []any{map[string]any{"currency": "EUR", "period": "2027-01", "rate": 1.1}}}},
		{"POST", "/v1/bulk/import", map[string]any{"resource": "benefits", "mode": "upsert", "records": []any{ben}}},
	}
}

// hostileBodies are mutations of a route's valid body that reached a 5xx or
// an echo before: NUL, blank or null names, foreign codes, markup in enum
// values, unknown fields and over-long strings.
func hostileBodies(valid map[string]any) [][]byte {
	var out [][]byte
	add := func(m map[string]any) {
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	with := func(k string, v any) map[string]any {
		m := maps.Clone(valid)
		m[k] = v
		return m
	}
	long := strings.Repeat("<script>x</script>", 500)
	for k, v := range valid {
		switch v.(type) {
		case string:
			for _, bad := range []any{"", "   ", nil, 42, "nul\u0000in text", "<script>" + k + "</script>", long} {
				add(with(k, bad))
			}
		case []string, []any:
			add(with(k, []any{"<script>alert(1)</script>", "\u0000"}))
			add(with(k, map[string]any{"<script>": 1}))
		case map[string]any:
			add(with(k, map[string]any{"<script>alert(1)</script>": "<img src=x onerror=alert(1)>", "timezone": "Mars/Olympus_Mons<b>"}))
		}
	}
	add(with("currency", "<scr"))
	add(with("unknown_field_name", "value of the unknown field"))
	return out
}

func FuzzValueBody(f *testing.F) {
	ts, admin, initID := fuzzServer(f)
	routes := valueRoutes(f, ts, admin, initID)
	for i, r := range routes {
		valid, _ := json.Marshal(r.valid)
		f.Add(valid, uint8(i))
		for _, b := range hostileBodies(r.valid) {
			f.Add(b, uint8(i))
		}
		for _, b := range []string{``, `{}`, `null`, `[]`, `{"name":"\u0000"}`, `{"name":1e999}`, "{\"name\":\"\xff\"}"} {
			f.Add([]byte(b), uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, route uint8) {
		ts := ts.in(t)
		rt := routes[int(route)%len(routes)]
		r := ts.do(&admin, rt.method, rt.path, body)
		checkFuzzResponse(t, body, r)
	})
}
