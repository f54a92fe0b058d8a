package api_test

// Contract tests: api/openapi.yaml is the contract, and these tests hold the
// real API to it. Every request goes through the real Fiber app on a real
// PostgreSQL database; every response (status, headers, body) is validated
// against the document with kin-openapi, and a status the document does not
// list for the operation fails the test. Requests the API accepts must be
// accepted by the document too, and requests marked `docRejects` must be
// refused by it, so the two agree on what is valid in both directions.
//
// Adding an operation: document it in openapi.yaml (TestContractRouteCoverage
// fails until you do), then add its success and error calls here, or in a
// TestContract... function of your own built on newContractClient.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/api"
	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/ratelimit"
	"github.com/valuecase/valuecase/internal/webhook"
)

// --- the document ---

// contractSpec is the parsed document and a router over its paths.
type contractSpec struct {
	doc    *openapi3.T
	router routers.Router
}

var contractDecoderOnce sync.Once

// contractSchemaOptions makes kin-openapi enforce `format: uuid` (it does not
// by default; date and date-time are enforced out of the box).
func contractSchemaOptions() []openapi3.SchemaValidationOption {
	return []openapi3.SchemaValidationOption{
		openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
	}
}

// contractLoadSpec parses the embedded document (the bytes /openapi.yaml serves) and validates it.
func contractLoadSpec(t *testing.T) *contractSpec {
	t.Helper()
	contractDecoderOnce.Do(func() {
		// The JWKS media type is JSON; kin-openapi knows only the common JSON types.
		openapi3filter.RegisterBodyDecoder("application/jwk-set+json", openapi3filter.JSONBodyDecoder)
	})
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPISpec)
	if err != nil {
		t.Fatalf("openapi.yaml does not parse: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Fatalf("openapi.yaml declares OpenAPI %q, want 3.0.3", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI 3.0.3 document: %v", err)
	}
	// Route by path alone: requests in tests carry no scheme and host.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing openapi.yaml: %v", err)
	}
	return &contractSpec{doc: doc, router: router}
}

func (s *contractSpec) options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus:   true, // an undocumented status fails
		MultiError:              true,
		AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: contractSchemaOptions(),
	}
}

// operations lists the document's operations as "METHOD /path" → operation.
func (s *contractSpec) operations() map[string]*openapi3.Operation {
	out := map[string]*openapi3.Operation{}
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[method+" "+path] = op
		}
	}
	return out
}

// contractNormalizePath turns a Fiber route ("/v1/initiatives/:id", "/docs/*")
// or an OpenAPI path ("/v1/initiatives/{id}", "/docs/{asset}") into one form.
func contractNormalizePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || s == "*" || s == "+" || (strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")) {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// --- the client ---

// contractClient sends requests to the real API and validates them and their
// responses against the document, recording which statuses each operation showed.
type contractClient struct {
	ts     *testServer
	spec   *contractSpec
	mu     sync.Mutex
	shared *sync.Mutex             // guards seen when it belongs to another client (on)
	seen   map[string]map[int]bool // operationId → statuses seen
	addr   string                  // of the app's real listener, once sendRaw started it
}

func newContractClient(t *testing.T, ts *testServer) *contractClient {
	return &contractClient{ts: ts, spec: contractLoadSpec(t), seen: map[string]map[int]bool{}}
}

// contractCall is one request and what it must produce.
type contractCall struct {
	as      *caller  // nil: no Authorization and no X-Tenant-ID
	method  string   // HTTP method
	path    string   // path with query
	body    any      // nil, string, []byte, or a value sent as JSON
	headers []string // name, value pairs; an empty value removes the header
	want    int      // expected status
	code    string   // expected error.code, when set
	// How the request itself is checked against the document: by default a
	// request answered with 2xx must be valid per the document. docRejects:
	// the document must refuse it too. docSkip: not checked.
	docRejects, docSkip bool
	// network sends the request over a real TCP connection instead of
	// App().Test, which cannot return a response the server writes before
	// reading the body (413). Only the first 4 KB of the body are sent.
	network bool
}

func (cc *contractClient) newRequest(t *testing.T, c contractCall) *http.Request {
	t.Helper()
	var raw []byte
	switch b := c.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		raw = j
	}
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(c.method, c.path, rd)
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.as != nil {
		req.Header.Set("Authorization", "Bearer "+cc.ts.token(*c.as))
		req.Header.Set("X-Tenant-ID", c.as.tenant.String())
	}
	for i := 0; i+1 < len(c.headers); i += 2 {
		if c.headers[i+1] == "" {
			req.Header.Del(c.headers[i])
		} else {
			req.Header.Set(c.headers[i], c.headers[i+1])
		}
	}
	if raw != nil {
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	return req
}

// call sends c, checks the request and the response against the document and
// the expected status, and returns the response.
func (cc *contractClient) call(t *testing.T, c contractCall) response {
	t.Helper()
	name := c.method + " " + c.path
	if len(name) > 120 {
		name = name[:120] + "…"
	}
	req := cc.newRequest(t, c)
	// A path parameter holding an escaped slash (a workflow id, %2F) is one segment: the
	// router would decode it into several, so it is matched on the escaped form.
	routeReq := req
	if req.URL.RawPath != "" {
		routeReq = req.Clone(context.Background())
		routeReq.URL.Path, routeReq.URL.RawPath = req.URL.RawPath, ""
	}
	route, params, err := cc.spec.router.FindRoute(routeReq)
	if err != nil {
		t.Fatalf("%s: the request matches no operation of openapi.yaml: %v", name, err)
	}
	ctx := context.Background()
	reqIn := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: cc.spec.options()}
	checkReq := !c.docSkip && (c.docRejects || (c.want >= 200 && c.want < 300))
	if checkReq {
		vreq := cc.newRequest(t, c)
		vin := *reqIn
		vin.Request = vreq
		err := openapi3filter.ValidateRequest(ctx, &vin)
		switch {
		case c.docRejects && err == nil:
			t.Errorf("%s: the API refuses this request (%d) but openapi.yaml accepts it", name, c.want)
		case !c.docRejects && err != nil:
			t.Errorf("%s: the API accepts this request but openapi.yaml refuses it: %v", name, err)
		}
	}

	var res *http.Response
	if c.network {
		res, err = cc.sendRaw(t, req)
	} else {
		res, err = cc.ts.srv.App().Test(req, -1)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: res.StatusCode, header: res.Header, body: body}

	op := route.Operation
	mu := &cc.mu
	if cc.shared != nil {
		mu = cc.shared
	}
	mu.Lock()
	if cc.seen[op.OperationID] == nil {
		cc.seen[op.OperationID] = map[int]bool{}
	}
	cc.seen[op.OperationID][r.status] = true
	mu.Unlock()

	short := string(body)
	if len(short) > 600 {
		short = short[:600] + "…"
	}
	if r.status != c.want {
		t.Errorf("%s: status %d, want %d: %s", name, r.status, c.want, short)
	}
	// The request id: the client's when it sent a valid one, and the same in an error body.
	rid := r.header.Get("X-Request-ID")
	if sent := req.Header.Get("X-Request-ID"); sent != "" && rid != sent {
		t.Errorf("%s: X-Request-ID %q sent, %q received", name, sent, rid)
	}
	if r.status >= 400 && json.Valid(body) {
		var e struct {
			Error struct {
				Code      string
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if c.code != "" && e.Error.Code != c.code {
			t.Errorf("%s: error.code %q, want %q: %s", name, e.Error.Code, c.code, short)
		}
		if e.Error.Code != "" && e.Error.RequestID != rid {
			t.Errorf("%s: error.request_id %q differs from the X-Request-ID header %q", name, e.Error.RequestID, rid)
		}
	}
	// kin-openapi skips some statuses (304) entirely; check they are documented.
	if op.Responses.Status(r.status) == nil {
		t.Errorf("%s: status %d is not documented for %s: %s", name, r.status, op.OperationID, short)
		return r
	}
	resIn := &openapi3filter.ResponseValidationInput{RequestValidationInput: reqIn, Status: r.status, Header: r.header, Options: cc.spec.options()}
	resIn.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, resIn); err != nil {
		t.Errorf("%s: the %d response does not match openapi.yaml (%s): %v\nheaders: %v\nbody: %s", name, r.status, op.OperationID, err, contractRelevantHeaders(r.header), short)
	}
	return r
}

// sendRaw writes the request head and at most 4 KB of its body to a real
// connection of the app and reads the response.
func (cc *contractClient) sendRaw(t *testing.T, req *http.Request) (*http.Response, error) {
	t.Helper()
	cc.mu.Lock()
	if cc.addr == "" {
		cc.addr = cc.ts.listen()
	}
	addr := cc.addr
	cc.mu.Unlock()

	var raw []byte
	if req.GetBody != nil {
		b, _ := req.GetBody()
		raw, _ = io.ReadAll(b)
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n", req.Method, req.URL.RequestURI(), addr, len(raw))
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	head.WriteString("\r\n")
	head.Write(raw[:min(len(raw), 4096)])
	if _, err := conn.Write(head.Bytes()); err != nil {
		return nil, err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

func contractRelevantHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for k := range h {
		if strings.HasPrefix(k, "X-") || k == "Retry-After" || k == "Content-Type" || k == "Www-Authenticate" || k == "Location" {
			out[k] = h.Get(k)
		}
	}
	return out
}

// create POSTs an initiative that must succeed and returns it.
func (cc *contractClient) create(t *testing.T, as caller, body map[string]any) map[string]any {
	t.Helper()
	r := cc.call(t, contractCall{as: &as, method: "POST", path: "/v1/initiatives", body: body, want: 201})
	if r.status != 201 {
		t.FailNow()
	}
	return r.json(t)
}

// uncovered lists documented "operationId status" pairs never seen, for the
// operations with one of the tags, minus the statuses in skip.
func (cc *contractClient) uncovered(tags []string, skip ...int) []string {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	var out []string
	for _, op := range cc.spec.operations() {
		if !slices.ContainsFunc(op.Tags, func(tag string) bool { return slices.Contains(tags, tag) }) {
			continue
		}
		for code := range op.Responses.Map() {
			var status int
			if _, err := fmt.Sscan(code, &status); err != nil || slices.Contains(skip, status) {
				continue
			}
			if !cc.seen[op.OperationID][status] {
				out = append(out, fmt.Sprintf("%s %d", op.OperationID, status))
			}
		}
	}
	sort.Strings(out)
	return out
}

// contractTenant adds a tenant on the plan to the server's database and returns its Admin.
func contractTenant(t *testing.T, ts *testServer, plan string) caller {
	t.Helper()
	id := dbtest.NewTenant(t, ts.pool, plan)
	return caller{sub: "admin-1", tenant: id, roles: []string{"Admin"}, permissions: allPermissions()}
}

// contractFreshServer is another API server on ts's database, keys and
// tenant, with rate limiters of its own: refusals counted against the client
// IP (burst 60) on it leave ts's allowance alone.
func contractFreshServer(ts *testServer) *testServer {
	d := ts.srv.Deps
	d.Limits, d.Concurrency, d.Registry = ratelimit.NewMemory(nil), ratelimit.NewMemoryConcurrency(), nil
	return &testServer{t: ts.t, srv: api.New(d), pool: ts.pool, keys: ts.keys, tenant: ts.tenant}
}

// contractFrozenServer is a fresh server whose rate limiter's clock stands
// still: an allowance used up stays used up, however slowly the test runs,
// so a 429 section cannot be undone by a refill between exhausting and asking.
func contractFrozenServer(ts *testServer) *testServer {
	d := ts.srv.Deps
	frozen := time.Now()
	d.Limits, d.Concurrency, d.Registry = ratelimit.NewMemory(func() time.Time { return frozen }), ratelimit.NewMemoryConcurrency(), nil
	return &testServer{t: ts.t, srv: api.New(d), pool: ts.pool, keys: ts.keys, tenant: ts.tenant}
}

// limitsAndOutage is the common end of a group's contract test: a
// starter tenant over its burst gets 429 with Retry-After on every operation
// (probe exhausts it, on a server whose limiter clock stands still), then the
// database goes away and every operation is 503. It closes ts's pool: call it
// last, just before the coverage check.
func (cc *contractClient) limitsAndOutage(t *testing.T, ts *testServer, admin caller, probe string, ops []contractCall) {
	t.Helper()
	starter := contractTenant(t, ts, "starter")
	limits := contractFrozenServer(ts)
	limitsCC := cc.on(limits)
	for i := 0; ; i++ {
		if r := limits.do(&starter, "GET", probe, nil); r.status == 429 {
			break
		}
		if i > 200 {
			t.Fatalf("GET %s: never rate limited", probe)
		}
	}
	for _, op := range ops {
		op.as, op.want, op.code = &starter, 429, "RATE_LIMIT_EXCEEDED"
		if r := limitsCC.call(t, op); r.status == 429 && r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 429 without Retry-After", op.method, op.path)
		}
	}
	ts.pool.Close()
	for _, op := range ops {
		op.as, op.want, op.code = &admin, 503, "SERVICE_UNAVAILABLE"
		cc.call(t, op)
	}
}

// on is a client for another server, sharing the document and the record of statuses seen.
func (cc *contractClient) on(ts *testServer) *contractClient {
	return &contractClient{ts: ts, spec: cc.spec, seen: cc.seen, shared: &cc.mu}
}

// contractV1Op is one /v1 operation with a request that reaches its handler.
type contractV1Op struct {
	method, path string
	body         any
}

func contractV1Ops(id string) []contractV1Op {
	return []contractV1Op{
		{"GET", "/v1/initiatives", nil},
		{"POST", "/v1/initiatives", map[string]any{}},
		{"GET", "/v1/initiatives/" + id, nil},
		{"PUT", "/v1/initiatives/" + id, map[string]any{"name": "Contract"}},
		{"PATCH", "/v1/initiatives/" + id, map[string]any{}},
		{"DELETE", "/v1/initiatives/" + id, nil},
		{"POST", "/v1/initiatives/" + id + "/status", map[string]any{"status": "in_review"}},
		{"GET", "/v1/initiatives/" + id + "/status-history", nil},
		{"GET", "/v1/initiatives/" + id + "/projects", nil},
		{"POST", "/v1/initiatives/" + id + "/projects", map[string]any{"name": "p"}},
	}
}

// --- tests ---

// TestContractDocument validates the document and the conventions every operation must follow.
func TestContractDocument(t *testing.T) {
	t.Parallel()
	spec := contractLoadSpec(t)
	v1Headers := []string{"X-Request-ID", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Retry-After"}
	for key, op := range spec.operations() {
		_, path, _ := strings.Cut(key, " ")
		if op.OperationID == "" || len(op.Tags) == 0 || op.Summary == "" {
			t.Errorf("%s: needs operationId, tags and summary", key)
		}
		var ok2xx bool
		for code := range op.Responses.Map() {
			ok2xx = ok2xx || strings.HasPrefix(code, "2")
			if code == "default" {
				t.Errorf("%s: no `default` response: list every status", key)
			}
		}
		if !ok2xx {
			t.Errorf("%s: documents no success response", key)
		}
		public := op.Security != nil && len(*op.Security) == 0
		// /api/v1/agents/... is the workflow view: authenticated and tenant-scoped like /v1.
		if !strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/api/v1/agents/") {
			if !public {
				t.Errorf("%s: an operation outside /v1 is public: set `security: []`", key)
			}
			continue
		}
		var must []int
		for code, ref := range op.Responses.Map() {
			res := ref.Value
			for _, h := range v1Headers {
				if hv, ok := res.Headers[h]; !ok || !hv.Value.Required {
					t.Errorf("%s %s: response needs the required header %s", key, code, h)
				}
			}
			if code == "401" && res.Headers["WWW-Authenticate"] == nil {
				t.Errorf("%s 401: needs WWW-Authenticate", key)
			}
			if code == "429" && res.Headers["Retry-After"] == nil {
				t.Errorf("%s 429: needs Retry-After", key)
			}
		}
		if op.RequestBody != nil {
			must = append(must, 413, 415, 422)
		}
		if public {
			// A public /v1 operation (e.g. POST /v1/auth/token): no bearer token, no tenant.
			must = append(must, 429, 500)
		} else {
			// Authenticated, tenant-scoped, rate-limited.
			must = append(must, 400, 401, 403, 429, 500, 503)
			if strings.Contains(path, "{") {
				must = append(must, 404)
			}
			params := append(openapi3.Parameters{}, spec.doc.Paths.Value(path).Parameters...)
			params = append(params, op.Parameters...)
			var tenant bool
			for _, p := range params {
				if p.Value != nil && p.Value.In == "header" && p.Value.Name == "X-Tenant-ID" && p.Value.Required {
					tenant = true
				}
			}
			if !tenant {
				t.Errorf("%s: needs the required X-Tenant-ID header parameter", key)
			}
		}
		for _, status := range must {
			if op.Responses.Status(status) == nil {
				t.Errorf("%s: document status %d: every such /v1 operation can return it", key, status)
			}
		}
	}

	// The validator really enforces the formats the document relies on.
	schema := spec.doc.Components.Schemas["Initiative"].Value
	good := map[string]any{
		"id": uuid.NewString(), "name": "n", "description": "", "status": "draft", "industry": nil, "segment": nil,
		"owner_id": nil, "expected_start_date": "2025-01-31", "expected_end_date": nil,
		"created_at": "2025-01-02T03:04:05.123456Z", "updated_at": "2025-01-02T03:04:05Z",
	}
	if err := schema.VisitJSON(good, contractSchemaOptions()...); err != nil {
		t.Fatalf("a valid initiative is refused: %v", err)
	}
	for field, bad := range map[string]any{
		"id": "not-a-uuid", "expected_start_date": "2025-1-31", "created_at": "2025-01-02 03:04:05",
		"status": "open", "industry": 7, "description": nil,
	} {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		m[field] = bad
		if err := schema.VisitJSON(m, contractSchemaOptions()...); err == nil {
			t.Errorf("Initiative accepts %s = %v", field, bad)
		}
	}
	if err := schema.VisitJSON(map[string]any{"extra": 1}, contractSchemaOptions()...); err == nil {
		t.Error("Initiative accepts unknown fields")
	}
}

// TestContractRouteCoverage fails when a route of the app is not in the
// document, or a path of the document has no route.
func TestContractRouteCoverage(t *testing.T) {
	t.Parallel()
	spec := contractLoadSpec(t)
	srv := api.New(api.Deps{Config: testConfig(t), Limits: ratelimit.NewMemory(nil), Concurrency: ratelimit.NewMemoryConcurrency()})
	inApp := map[string]bool{}
	for _, r := range srv.App().GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == "USE" {
			continue // Fiber adds HEAD to every GET
		}
		inApp[r.Method+" "+contractNormalizePath(r.Path)] = true
	}
	inDoc := map[string]bool{}
	for key := range spec.operations() {
		method, path, _ := strings.Cut(key, " ")
		inDoc[method+" "+contractNormalizePath(path)] = true
	}
	var missing, extra []string
	for k := range inApp {
		if !inDoc[k] {
			missing = append(missing, k)
		}
	}
	for k := range inDoc {
		if !inApp[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, k := range missing {
		t.Errorf("route %s is registered in the app but not documented in api/openapi.yaml", k)
	}
	for _, k := range extra {
		t.Errorf("operation %s is documented in api/openapi.yaml but has no route in the app", k)
	}
	if len(inApp) == 0 {
		t.Fatal("the app has no routes")
	}
}

// TestContractAPI drives every operation through its success and error paths
// on one database and validates every response against the document.
func TestContractAPI(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, "enterprise")
	cc := newContractClient(t, ts)
	ctx := context.Background()

	admin := ts.admin()
	owner := caller{sub: "owner-1", tenant: ts.tenant, permissions: allPermissions()}
	exec := caller{sub: "exec-1", tenant: ts.tenant, roles: []string{"Executive"}, permissions: allPermissions()}
	// No roles: roles may grant permissions of their own (identity), these callers hold only their claims.
	reader := caller{sub: "reader-1", tenant: ts.tenant, permissions: []string{"initiatives:read"}}
	nobody := caller{sub: "nobody-1", tenant: ts.tenant, permissions: []string{}}
	other := contractTenant(t, ts, "enterprise") // another tenant of the same database

	big := `{"name":"big","description":"` + strings.Repeat("a", 6<<20) + `"}` // 6 MB: over the 5 MB limit
	missing := uuid.NewString()

	t.Run("operations and docs", func(t *testing.T) {
		r := cc.call(t, contractCall{method: "GET", path: "/health", want: 200, headers: []string{"X-Request-ID", "contract-health-1"}})
		if got := r.header.Get("X-Request-ID"); got != "contract-health-1" {
			t.Errorf("X-Request-ID not echoed: %q", got)
		}
		cc.call(t, contractCall{method: "GET", path: "/metrics", want: 200})
		cc.call(t, contractCall{method: "GET", path: "/.well-known/jwks.json", want: 200})
		r = cc.call(t, contractCall{method: "GET", path: "/openapi.yaml", want: 200})
		if !bytes.Equal(r.body, api.OpenAPISpec) {
			t.Error("/openapi.yaml does not serve the embedded document")
		}
		cc.call(t, contractCall{method: "GET", path: "/openapi.yaml", want: 304, headers: []string{"If-None-Match", r.header.Get("ETag")}})
		r = cc.call(t, contractCall{method: "GET", path: "/docs", want: 200})
		cc.call(t, contractCall{method: "GET", path: "/docs", want: 304, headers: []string{"If-None-Match", r.header.Get("ETag")}})
		for _, asset := range []string{"index.html", "swagger-ui-bundle.js", "swagger-ui.css", "index.css", "docs-init.js", "favicon-32x32.png", "LICENSE", "NOTICE"} {
			cc.call(t, contractCall{method: "GET", path: "/docs/" + asset + "?v=1", want: 200})
		}
		r = cc.call(t, contractCall{method: "GET", path: "/docs/swagger-ui.css", want: 200})
		cc.call(t, contractCall{method: "GET", path: "/docs/swagger-ui.css", want: 304, headers: []string{"If-None-Match", r.header.Get("ETag")}})
		cc.call(t, contractCall{method: "GET", path: "/docs/nope.js", want: 404, code: "NOT_FOUND"})
		// A request line plus headers over 16 KB: fasthttp refuses it before any route runs.
		huge := strings.Repeat("h", 17<<10)
		cc.call(t, contractCall{method: "GET", path: "/api/v1/health", want: 200})
		for _, path := range []string{"/health", "/api/v1/health", "/metrics", "/.well-known/jwks.json", "/openapi.yaml", "/docs", "/docs/swagger-ui.css"} {
			cc.call(t, contractCall{method: "GET", path: path, headers: []string{"X-Padding", huge}, want: 431, code: "INVALID_PARAMETER", network: true})
		}
	})

	var alpha, beta, gamma map[string]any
	t.Run("create", func(t *testing.T) {
		alpha = cc.create(t, admin, map[string]any{
			"name": "Alpha Program", "description": "Cut cost to serve", "industry": "fintech", "segment": "enterprise",
			"owner_id": "owner-1", "expected_start_date": "2025-01-01", "expected_end_date": "2025-12-31",
		})
		beta = cc.create(t, admin, map[string]any{"name": "Beta"})
		if beta["owner_id"] != "admin-1" || beta["status"] != "draft" {
			t.Errorf("a new initiative is draft and owned by its creator: %v", beta)
		}
		// A GET body sent back: read-only fields are ignored; status draft is allowed; charset is fine.
		gamma = cc.create(t, admin, map[string]any{"name": "Gamma", "status": "draft", "id": missing, "created_at": "x", "metrics": map[string]any{}})
		if gamma["id"] == missing {
			t.Error("create took the client's id")
		}
		cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/initiatives", body: map[string]any{"name": "alpha PROGRAM"}, want: 409, code: "ALREADY_EXISTS"})
	})

	t.Run("create errors", func(t *testing.T) {
		// POST /v1/initiatives is limited to 10 per minute per tenant: spread the refusals over tenants.
		var as caller
		n := 0
		post := func(c contractCall) {
			t.Helper()
			if n%9 == 0 {
				as = contractTenant(t, ts, "enterprise")
			}
			n++
			c.as, c.method, c.path = &as, "POST", "/v1/initiatives"
			cc.call(t, c)
		}
		post(contractCall{body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
		post(contractCall{body: `["name"]`, want: 400, code: "INVALID_PARAMETER", docRejects: true})
		post(contractCall{body: `null`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
		post(contractCall{body: `{"name":"a"} {"name":"b"}`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
		post(contractCall{body: map[string]any{"name": "Dates", "expected_start_date": "2025-06-01", "expected_end_date": "2025-05-31"}, want: 400, code: "INVALID_PARAMETER"})
		post(contractCall{body: `{"name":"x"}`, headers: []string{"Content-Type", "text/plain"}, want: 415, code: "INVALID_PARAMETER", docRejects: true})
		post(contractCall{body: big, want: 413, network: true, code: "INVALID_PARAMETER", headers: []string{"X-Request-ID", "contract-413"}})
		for _, body := range []map[string]any{
			{},
			{"name": nil},
			{"name": "   "},
			{"name": strings.Repeat("n", 201)},
			{"name": 42},
			{"name": "ok", "colour": "red"},
			{"name": "ok", "expected_start_date": "2025-13-01"},
			{"name": "ok", "status": "active"},
			{"name": "ok", "description": strings.Repeat("d", 10_001)},
			{"name": "ok", "industry": strings.Repeat("i", 101)},
			{"name": "ok", "owner_id": strings.Repeat("o", 256)},
			{"name": "ok", "segment": []string{"x"}},
		} {
			post(contractCall{body: body, want: 422, code: "VALIDATION_ERROR", docRejects: true})
		}
		// NUL characters cannot be expressed in the document's schemas.
		post(contractCall{body: map[string]any{"name": "nul\x00name"}, want: 422, code: "VALIDATION_ERROR"})

		// 1,000 non-archived initiatives per tenant.
		full := contractTenant(t, ts, "enterprise")
		err := db.InTenant(ctx, ts.pool, full.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO initiatives (tenant_id, name) SELECT $1, 'bulk ' || g FROM generate_series(1, 1000) g`, full.tenant)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		cc.call(t, contractCall{as: &full, method: "POST", path: "/v1/initiatives", body: map[string]any{"name": "one too many"}, want: 409, code: "CONFLICT"})
	})

	t.Run("list", func(t *testing.T) {
		r := cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives", want: 200})
		if n := len(r.json(t)["data"].([]any)); n != 3 {
			t.Errorf("list has %d initiatives, want 3", n)
		}
		cc.call(t, contractCall{as: &reader, method: "GET", path: "/v1/initiatives?page=1&page_size=2&status=draft&industry=fintech&sort=name&order=asc", want: 200})
		for _, s := range []string{"updated_at", "status", "expected_start_date", "expected_end_date", "created_at"} {
			cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives?page_size=200&order=desc&sort=" + s, want: 200})
		}
		r = cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives?page=99", want: 200})
		if p := r.json(t)["meta"].(map[string]any)["pagination"].(map[string]any); p["total"] != float64(3) || p["total_pages"] != float64(1) {
			t.Errorf("past the last page: pagination %v", p)
		}
		for _, q := range []string{"page=0", "page=-1", "page=x", "page_size=0", "page_size=201", "status=open", "status=DRAFT", "sort=owner_id", "order=up", "industry="} {
			cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives?" + q, want: 400, code: "INVALID_PARAMETER", docRejects: true})
		}
		// Not expressible in OpenAPI 3.0: unknown and repeated parameters, and a bad escape.
		for _, q := range []string{"colour=red", "page=1&page=2", "page=%zz", "industry=" + strings.Repeat("i", 101), "industry=a%00b"} {
			cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives?" + q, want: 400, code: "INVALID_PARAMETER", docSkip: true})
		}
	})

	if alpha == nil || beta == nil || gamma == nil {
		t.Fatal("the initiatives the other sub-tests need were not created")
	}
	alphaID, betaID, gammaID := alpha["id"].(string), beta["id"].(string), gamma["id"].(string)
	alphaPath, betaPath, gammaPath := "/v1/initiatives/"+alphaID, "/v1/initiatives/"+betaID, "/v1/initiatives/"+gammaID

	t.Run("get", func(t *testing.T) {
		r := cc.call(t, contractCall{as: &reader, method: "GET", path: alphaPath, want: 200})
		if m := r.json(t); m["review"] != nil || len(m["projects"].([]any)) != 0 {
			t.Errorf("fresh initiative: %v", m)
		}
		for _, id := range []string{missing, "not-a-uuid", "00000000-0000-0000-0000-000000000000", "%20", "ALPHA"} {
			cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives/" + id, want: 404, code: "NOT_FOUND"})
		}
		otherAdmin := other
		cc.call(t, contractCall{as: &otherAdmin, method: "GET", path: alphaPath, want: 404, code: "NOT_FOUND"})
	})

	t.Run("projects", func(t *testing.T) {
		cc.call(t, contractCall{as: &admin, method: "POST", path: alphaPath + "/projects", body: map[string]any{"name": "Discovery", "description": "first"}, want: 201})
		cc.call(t, contractCall{as: &admin, method: "POST", path: alphaPath + "/projects", body: map[string]any{"name": "Delivery", "description": nil}, want: 201,
			headers: []string{"Content-Type", "application/json; charset=utf-8"}})
		cc.call(t, contractCall{as: &admin, method: "POST", path: gammaPath + "/projects", body: map[string]any{"name": "Doomed"}, want: 201})
		cc.call(t, contractCall{as: &reader, method: "GET", path: alphaPath + "/projects?unknown=1", want: 400, code: "INVALID_PARAMETER", docSkip: true})
		r := cc.call(t, contractCall{as: &reader, method: "GET", path: alphaPath + "/projects", want: 200})
		if n := len(r.json(t)["data"].([]any)); n != 2 {
			t.Errorf("%d projects, want 2", n)
		}
		r = cc.call(t, contractCall{as: &reader, method: "GET", path: alphaPath, want: 200})
		if m := r.json(t)["metrics"].(map[string]any); m["projects_total"] != float64(2) || m["projects_active"] != float64(2) {
			t.Errorf("metrics %v", m)
		}

		cc.call(t, contractCall{as: &admin, method: "POST", path: alphaPath + "/projects", body: `{"name":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
		cc.call(t, contractCall{as: &admin, method: "POST", path: alphaPath + "/projects", body: `{"name":"x"}`, headers: []string{"Content-Type", "application/xml"}, want: 415, docRejects: true})
		cc.call(t, contractCall{as: &admin, method: "POST", path: alphaPath + "/projects", body: big, want: 413, network: true})
		for _, body := range []map[string]any{{}, {"name": ""}, {"name": "x", "status": "active"}, {"name": "x", "description": 1}} {
			cc.call(t, contractCall{as: &admin, method: "POST", path: alphaPath + "/projects", body: body, want: 422, code: "VALIDATION_ERROR", docRejects: true})
		}
		cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/initiatives/" + missing + "/projects", body: map[string]any{"name": "x"}, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives/nope/projects", want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &reader, method: "POST", path: alphaPath + "/projects", body: map[string]any{"name": "x"}, want: 403, code: "AUTHORIZATION_ERROR"})

		// 200 projects per initiative.
		err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO projects (tenant_id, initiative_id, name) SELECT $1, $2, 'bulk ' || g FROM generate_series(1, 200) g`, ts.tenant, uuid.MustParse(betaID))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		cc.call(t, contractCall{as: &admin, method: "POST", path: betaPath + "/projects", body: map[string]any{"name": "201st"}, want: 409, code: "CONFLICT"})
		r = cc.call(t, contractCall{as: &admin, method: "GET", path: betaPath + "/projects", want: 200})
		if n := len(r.json(t)["data"].([]any)); n != 200 {
			t.Errorf("%d projects, want 200", n)
		}
		cc.call(t, contractCall{as: &admin, method: "GET", path: betaPath, want: 200})
	})

	t.Run("update", func(t *testing.T) {
		r := cc.call(t, contractCall{as: &admin, method: "PATCH", path: alphaPath, body: map[string]any{"description": nil, "segment": "mid-market"}, want: 200})
		if m := r.json(t); m["description"] != "" || m["segment"] != "mid-market" || m["industry"] != "fintech" {
			t.Errorf("PATCH: %v", m)
		}
		// Sending a GET body back (with its read-only fields) works.
		full := cc.call(t, contractCall{as: &admin, method: "GET", path: alphaPath, want: 200}).json(t)
		full["description"] = "round trip"
		cc.call(t, contractCall{as: &admin, method: "PUT", path: alphaPath, body: full, want: 200})
		r = cc.call(t, contractCall{as: &admin, method: "PUT", path: alphaPath, body: map[string]any{"name": "Alpha Program", "industry": "fintech", "owner_id": "owner-1"}, want: 200})
		if m := r.json(t); m["segment"] != nil || m["expected_start_date"] != nil || m["description"] != "" || m["status"] != "draft" {
			t.Errorf("PUT clears absent fields and keeps the status: %v", m)
		}
		// No Content-Type at all is read as JSON.
		cc.call(t, contractCall{as: &admin, method: "PATCH", path: alphaPath, body: map[string]any{"segment": "smb"}, headers: []string{"Content-Type", ""}, want: 200, docSkip: true})

		for _, method := range []string{"PUT", "PATCH"} {
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: `{"name":"x"`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": "x", "expected_start_date": "2025-02-01", "expected_end_date": "2025-01-01"}, want: 400, code: "INVALID_PARAMETER"})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: `{"name":"x"}`, headers: []string{"Content-Type", "text/csv"}, want: 415, docRejects: true})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: big, want: 413, network: true})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": "x", "owner": "me"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": nil}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": "x", "status": "paused"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": "x", "expected_end_date": "31/12/2025"}, want: 422, code: "VALIDATION_ERROR", docRejects: true})
			// The status table applies to PUT and PATCH: draft → approved does not exist; draft → in_review is owner/Admin.
			r := cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": "Alpha Program", "status": "approved"}, want: 422, code: "VALIDATION_ERROR"})
			contractCheckTransitionError(t, r)
			cc.call(t, contractCall{as: &exec, method: method, path: alphaPath, body: map[string]any{"name": "Alpha Program", "status": "in_review"}, want: 403, code: "AUTHORIZATION_ERROR"})
			cc.call(t, contractCall{as: &admin, method: method, path: alphaPath, body: map[string]any{"name": "BETA"}, want: 409, code: "ALREADY_EXISTS"})
			cc.call(t, contractCall{as: &admin, method: method, path: "/v1/initiatives/" + missing, body: map[string]any{"name": "x"}, want: 404, code: "NOT_FOUND"})
			cc.call(t, contractCall{as: &reader, method: method, path: alphaPath, body: map[string]any{"name": "x"}, want: 403, code: "AUTHORIZATION_ERROR"})
		}
		// A status in PATCH/PUT is a transition: Beta draft → in_review (PATCH), same status kept (PUT).
		r = cc.call(t, contractCall{as: &admin, method: "PATCH", path: betaPath, body: map[string]any{"status": "in_review"}, want: 200})
		if r.json(t)["status"] != "in_review" {
			t.Errorf("PATCH status: %s", r.body)
		}
		cc.call(t, contractCall{as: &admin, method: "PUT", path: betaPath, body: map[string]any{"name": "Beta", "status": "in_review", "owner_id": "admin-1"}, want: 200})
		cc.call(t, contractCall{as: &admin, method: "PATCH", path: betaPath, body: map[string]any{"status": nil}, want: 200})
	})

	t.Run("status", func(t *testing.T) {
		st := func(as caller, path, to string, want int, code string) response {
			t.Helper()
			return cc.call(t, contractCall{as: &as, method: "POST", path: path + "/status", body: map[string]any{"status": to, "reason": "contract " + to}, want: want, code: code})
		}
		// Alpha through the whole lifecycle, each step by whom the table allows.
		st(exec, alphaPath, "in_review", 403, "AUTHORIZATION_ERROR") // not owner nor Admin
		st(owner, alphaPath, "in_review", 200, "")
		st(owner, alphaPath, "approved", 403, "AUTHORIZATION_ERROR") // owner is not Admin/Executive
		st(exec, alphaPath, "approved", 200, "")
		contractCheckTransitionError(t, st(admin, alphaPath, "completed", 422, "VALIDATION_ERROR"))
		st(admin, alphaPath, "active", 200, "")
		st(owner, alphaPath, "completed", 200, "")
		st(admin, alphaPath, "completed", 422, "VALIDATION_ERROR") // to the current status

		// Beta (in review): rejected, back to draft, to review again, rejected, archived by Admin.
		st(exec, betaPath, "rejected", 200, "")
		st(exec, betaPath, "archived", 403, "AUTHORIZATION_ERROR")
		st(admin, betaPath, "approved", 422, "VALIDATION_ERROR")
		st(admin, betaPath, "draft", 200, "")
		st(admin, betaPath, "in_review", 200, "")
		st(admin, betaPath, "rejected", 200, "")
		st(admin, betaPath, "archived", 200, "")

		sp := alphaPath + "/status"
		cc.call(t, contractCall{as: &admin, method: "POST", path: sp, body: `{"status":`, want: 400, code: "INVALID_PARAMETER", docSkip: true})
		cc.call(t, contractCall{as: &admin, method: "POST", path: sp, body: `status=archived`, headers: []string{"Content-Type", "application/x-www-form-urlencoded"}, want: 415, docRejects: true})
		cc.call(t, contractCall{as: &admin, method: "POST", path: sp, body: big, want: 413, network: true})
		for _, body := range []map[string]any{{}, {"status": nil}, {"status": "done"}, {"status": "archived", "reason": strings.Repeat("r", 1001)}, {"status": "archived", "why": "x"}, {"status": 3}} {
			cc.call(t, contractCall{as: &admin, method: "POST", path: sp, body: body, want: 422, code: "VALIDATION_ERROR", docRejects: true})
		}
		cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/initiatives/" + missing + "/status", body: map[string]any{"status": "archived"}, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &reader, method: "POST", path: sp, body: map[string]any{"status": "archived"}, want: 403, code: "AUTHORIZATION_ERROR"})

		// A review round, as the review workflow records it.
		err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
			ref := dbsqlc.InitiativeReviewStartParams{TenantID: ts.tenant, InitiativeID: uuid.MustParse(alphaID), WorkflowID: "initiative-review/" + ts.tenant.String() + "/" + alphaID, RunID: "run-1"}
			if err := db.Q.InitiativeReviewStart(ctx, tx, ref); err != nil {
				return err
			}
			if _, err := db.Q.InitiativeReviewReminded(ctx, tx, dbsqlc.InitiativeReviewRemindedParams{TenantID: ref.TenantID, InitiativeID: ref.InitiativeID, RunID: ref.RunID}); err != nil {
				return err
			}
			decision := "approved"
			return db.Q.InitiativeReviewDecide(ctx, tx, dbsqlc.InitiativeReviewDecideParams{TenantID: ref.TenantID, InitiativeID: ref.InitiativeID, RunID: ref.RunID, Decision: &decision})
		})
		if err != nil {
			t.Fatal(err)
		}
		r := cc.call(t, contractCall{as: &reader, method: "GET", path: alphaPath, want: 200})
		if m := r.json(t); m["review"] == nil || m["metrics"].(map[string]any)["status_changes"] != float64(4) {
			t.Errorf("after review: %s", r.body)
		}

		r = cc.call(t, contractCall{as: &reader, method: "GET", path: alphaPath + "/status-history", want: 200})
		if n := len(r.json(t)["data"].([]any)); n != 5 {
			t.Errorf("history has %d entries, want 5: %s", n, r.body)
		}
		cc.call(t, contractCall{as: &reader, method: "GET", path: betaPath + "/status-history", want: 200})
		cc.call(t, contractCall{as: &reader, method: "GET", path: "/v1/initiatives/" + missing + "/status-history", want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &nobody, method: "GET", path: alphaPath + "/status-history", want: 403, code: "AUTHORIZATION_ERROR"})
	})

	t.Run("archive", func(t *testing.T) {
		cc.call(t, contractCall{as: &reader, method: "DELETE", path: gammaPath, want: 403, code: "AUTHORIZATION_ERROR"})
		cc.call(t, contractCall{as: &admin, method: "DELETE", path: "/v1/initiatives/" + missing, want: 404, code: "NOT_FOUND"})
		cc.call(t, contractCall{as: &admin, method: "DELETE", path: gammaPath, want: 204})
		r := cc.call(t, contractCall{as: &reader, method: "GET", path: gammaPath, want: 200})
		for _, p := range r.json(t)["projects"].([]any) {
			if p.(map[string]any)["status"] != "archived" {
				t.Errorf("project of an archived initiative: %v", p)
			}
		}
		// Archived is read-only: every write is 409 CONFLICT.
		cc.call(t, contractCall{as: &admin, method: "DELETE", path: gammaPath, want: 409, code: "CONFLICT"})
		cc.call(t, contractCall{as: &admin, method: "PUT", path: gammaPath, body: map[string]any{"name": "Gamma"}, want: 409, code: "CONFLICT"})
		cc.call(t, contractCall{as: &admin, method: "PATCH", path: gammaPath, body: map[string]any{"segment": "x"}, want: 409, code: "CONFLICT"})
		cc.call(t, contractCall{as: &admin, method: "POST", path: gammaPath + "/status", body: map[string]any{"status": "draft"}, want: 409, code: "CONFLICT"})
		cc.call(t, contractCall{as: &admin, method: "POST", path: gammaPath + "/projects", body: map[string]any{"name": "late"}, want: 409, code: "CONFLICT"})
		cc.call(t, contractCall{as: &admin, method: "POST", path: "/v1/initiatives", body: map[string]any{"name": "GAMMA"}, want: 409, code: "ALREADY_EXISTS"})

		r = cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives?status=archived", want: 200})
		if n := len(r.json(t)["data"].([]any)); n != 2 {
			t.Errorf("%d archived initiatives listed, want 2 (beta, gamma)", n)
		}
		r = cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives", want: 200})
		if n := len(r.json(t)["data"].([]any)); n != 1 {
			t.Errorf("%d initiatives listed, want 1 (archived excluded)", n)
		}
	})

	t.Run("refusals on every /v1 operation", func(t *testing.T) {
		tok := ts.token(admin)
		foreign := other // a token of another tenant, naming this tenant in X-Tenant-ID
		unknown := admin
		unknown.tenant = uuid.New()
		for _, op := range contractV1Ops(alphaID) {
			cc := cc.on(contractFreshServer(ts)) // 6 refusals per op count against the client IP
			c := contractCall{method: op.method, path: op.path, body: op.body}
			for _, v := range []struct {
				as      *caller
				headers []string
				want    int
				code    string
			}{
				{nil, []string{"X-Tenant-ID", ts.tenant.String(), "X-Request-ID", "contract-401"}, 401, "AUTHORIZATION_ERROR"},
				{nil, []string{"Authorization", "Bearer not-a-jwt", "X-Tenant-ID", ts.tenant.String()}, 401, "AUTHORIZATION_ERROR"},
				{nil, []string{"Authorization", "bearer " + tok, "X-Tenant-ID", ts.tenant.String()}, 401, "AUTHORIZATION_ERROR"},
				{&admin, []string{"X-Tenant-ID", ""}, 400, "INVALID_PARAMETER"},
				{&nobody, nil, 403, "AUTHORIZATION_ERROR"},
				{&foreign, []string{"X-Tenant-ID", ts.tenant.String()}, 403, "AUTHORIZATION_ERROR"},
				{&unknown, nil, 403, "AUTHORIZATION_ERROR"},
			} {
				c.as, c.headers, c.want, c.code = v.as, v.headers, v.want, v.code
				r := cc.call(t, c)
				if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s %s: 401 without WWW-Authenticate", op.method, op.path)
				}
			}
		}
	})

	t.Run("rate limits", func(t *testing.T) {
		// A server whose limiter clock stands still: no refill between exhausting and asking.
		lts := contractFrozenServer(ts)
		lcc := cc.on(lts)
		// POST /v1/initiatives: 10 per minute per tenant.
		limited := contractTenant(t, ts, "enterprise")
		for i := range 10 {
			lcc.create(t, limited, map[string]any{"name": fmt.Sprintf("limited %d", i)})
		}
		r := lcc.call(t, contractCall{as: &limited, method: "POST", path: "/v1/initiatives", body: map[string]any{"name": "eleventh"}, want: 429, code: "RATE_LIMIT_EXCEEDED"})
		if r.header.Get("X-RateLimit-Limit") != "10" || r.header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("429 headers: %v", contractRelevantHeaders(r.header))
		}
		// Other routes of that tenant are not affected by the per-endpoint limit.
		lcc.call(t, contractCall{as: &limited, method: "GET", path: "/v1/initiatives", want: 200})

		// Every operation refuses a starter tenant (burst 20) over its limit.
		starter := contractTenant(t, ts, "starter")
		for _, op := range contractV1Ops(uuid.NewString()) {
			got := false
			for range 40 {
				c := contractCall{as: &starter, method: op.method, path: op.path, body: op.body, docSkip: true}
				req := lcc.newRequest(t, c)
				res, err := lts.srv.App().Test(req, -1)
				if err != nil {
					t.Fatal(err)
				}
				_ = res.Body.Close()
				if res.StatusCode == 429 {
					got = true
					break
				}
			}
			if !got {
				t.Fatalf("%s %s: never refused with 429", op.method, op.path)
			}
			// Validate one refusal of each operation (the allowance is exhausted now).
			c := contractCall{as: &starter, method: op.method, path: op.path, body: op.body, want: 429, code: "RATE_LIMIT_EXCEEDED"}
			if r := lcc.call(t, c); r.status == 429 && r.header.Get("Retry-After") == "" {
				t.Errorf("%s %s: 429 without Retry-After", op.method, op.path)
			}
		}

		// Before the tenant is known, refusals count against the client IP (burst 60):
		// a server of its own so the other tests keep their allowance.
		anon := contractFrozenServer(ts)
		acc := cc.on(anon)
		for i := 0; ; i++ {
			req := acc.newRequest(t, contractCall{method: "GET", path: "/v1/initiatives"})
			res, err := anon.srv.App().Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode == 429 {
				break
			}
			if i > 100 {
				t.Fatal("unauthenticated requests are never rate limited")
			}
		}
		acc.call(t, contractCall{method: "GET", path: "/v1/initiatives", want: 429, code: "RATE_LIMIT_EXCEEDED"})
	})

	t.Run("events", func(t *testing.T) {
		contractCheckEvents(t, cc.spec, ts, map[string]int{"initiative.created": 3, "initiative.status_changed": 11})
	})

	t.Run("preconditions", func(t *testing.T) { // after the events count: a 409 writes nothing, but stays out of its way
		id := cc.create(t, admin, map[string]any{"name": "Conditional"})["id"].(string)
		var calls []contractCall
		for _, op := range contractV1Ops(id) {
			calls = append(calls, contractCall{method: op.method, path: op.path, body: op.body})
		}
		cc.preconditions(t, admin, calls)
	})

	// Every documented status of these operations was seen, but for 500
	// (not provokable) and 503 (TestContractUnavailable).
	for _, u := range cc.uncovered([]string{"operations", "docs", "initiatives", "projects"}, 500, 503) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// contractCheckTransitionError checks the 422 of a transition the table does not have.
func contractCheckTransitionError(t *testing.T, r response) {
	t.Helper()
	if r.status != 422 {
		return
	}
	e := r.json(t)["error"].(map[string]any)
	errs, _ := e["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["code"] != "invalid_transition" || errs[0].(map[string]any)["field"] != "status" {
		t.Errorf("invalid transition: want errors[0] = {field: status, code: invalid_transition}: %s", r.body)
	}
}

// contractCheckEvents validates the outbox events of the server's tenant, as
// webhook envelopes, against components.schemas.WebhookEvent and the data schemas.
func contractCheckEvents(t *testing.T, spec *contractSpec, ts *testServer, want map[string]int) {
	t.Helper()
	expandBatches(t, ts) // the relay's first step: handlers see a bulk import's events one by one
	ctx := context.Background()
	schemas := spec.doc.Components.Schemas
	dataSchema := map[string]string{"initiative.created": "Initiative", "initiative.status_changed": "InitiativeStatusChangedData",
		"benefit.actual_recorded": "BenefitActualRecordedData", "stakeholder.engagement": "EngagementLogged"}
	got := map[string]int{}
	err := db.InTenant(ctx, ts.pool, ts.tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, tenant_id, type, data, created_at FROM outbox_events ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, tenant uuid.UUID
			var typ string
			var data []byte
			var at time.Time
			if err := rows.Scan(&id, &tenant, &typ, &data, &at); err != nil {
				return err
			}
			got[typ]++
			p, err := webhook.NewPayload(webhook.Envelope{ID: id.String(), Type: typ, CreatedAt: at, TenantID: tenant.String(), Data: data})
			if err != nil {
				return err
			}
			var envelope map[string]any
			if err := json.Unmarshal(p.Body, &envelope); err != nil {
				return err
			}
			if err := schemas["WebhookEvent"].Value.VisitJSON(envelope, contractSchemaOptions()...); err != nil {
				t.Errorf("%s event envelope does not match WebhookEvent: %v\n%s", typ, err, p.Body)
			}
			name, ok := dataSchema[typ]
			if !ok {
				t.Errorf("event type %s has no data schema in openapi.yaml", typ)
				continue
			}
			if err := schemas[name].Value.VisitJSON(envelope["data"], contractSchemaOptions()...); err != nil {
				t.Errorf("%s event data does not match %s: %v\n%s", typ, name, err, data)
			}
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
}

// TestContractUnavailable: with the database gone, /health and every /v1
// operation answer 503 as documented.
func TestContractUnavailable(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, "enterprise")
	cc := newContractClient(t, ts)
	admin := ts.admin()
	cached := cc.call(t, contractCall{as: &admin, method: "GET", path: "/v1/initiatives", want: 200}) // the tenant is cached now
	_ = cached
	unseen := contractTenant(t, ts, "enterprise") // a tenant the server has not looked up yet
	ts.pool.Close()

	r := cc.call(t, contractCall{method: "GET", path: "/health", want: 503})
	if r.status == 503 && r.json(t)["status"] != "down" {
		t.Errorf("health: %s", r.body)
	}
	for _, op := range contractV1Ops(uuid.NewString()) {
		cc.call(t, contractCall{as: &admin, method: op.method, path: op.path, body: op.body, want: 503, code: "SERVICE_UNAVAILABLE"})
	}
	// Tenant lookup itself fails.
	cc.call(t, contractCall{as: &unseen, method: "GET", path: "/v1/initiatives", want: 503, code: "SERVICE_UNAVAILABLE"})
	for _, u := range cc.uncovered([]string{"initiatives", "projects"}, 200, 201, 204, 304, 400, 401, 403, 404, 409, 413, 415, 422, 429, 500) {
		t.Errorf("documented but never exercised: %s", u)
	}
}

// preconditions exercises the conditional requests of a group's record
// operations among calls (each naming an existing record and a valid body):
// a GET that documents If-None-Match answers 304 to its own ETag, and a
// write that documents If-Match is a 409 CONFLICT for a version the record
// never had (nothing is written). TestETagOptimisticLocking covers the rest.
func (cc *contractClient) preconditions(t *testing.T, as caller, calls []contractCall) {
	t.Helper()
	const stale = `"1.stale"` // version 1: one microsecond after 1970, which no record has
	for _, c := range calls {
		req := cc.newRequest(t, contractCall{as: &as, method: c.method, path: c.path, body: c.body})
		route, _, err := cc.spec.router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		for _, p := range route.Operation.Parameters {
			switch p.Value.Name {
			case "If-None-Match":
				r := cc.call(t, contractCall{as: &as, method: c.method, path: c.path, want: 200})
				cc.call(t, contractCall{as: &as, method: c.method, path: c.path, headers: []string{"If-None-Match", r.header.Get("ETag")}, want: 304})
			case "If-Match":
				cc.call(t, contractCall{as: &as, method: c.method, path: c.path, body: c.body, headers: []string{"If-Match", stale}, want: 409, code: "CONFLICT"})
			}
		}
	}
}
