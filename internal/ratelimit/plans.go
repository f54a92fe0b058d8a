package ratelimit

import (
	"errors"
	"fmt"
	"strings"
)

// Plan is a tenant's plan tier, stored in its canonical lower-case form.
type Plan string

// The plan tiers of spec section 8, first tier table. The spec also states a
// second, contradicting tier description (Standard 1,000/min burst 100,
// Enterprise 5,000/min burst 500); it is not used (section 6).
const (
	PlanStarter        Plan = "starter"
	PlanProfessional   Plan = "professional"
	PlanEnterprise     Plan = "enterprise"
	PlanEnterprisePlus Plan = "enterprise_plus" // negotiated per tenant: no defaults
)

// ErrUnknownPlan is returned (wrapped) by ParsePlan for an unknown name.
var ErrUnknownPlan = errors.New("ratelimit: unknown plan")

type planLimits struct {
	limit      Limit
	concurrent int
}

var planTable = map[Plan]planLimits{
	PlanStarter:      {Limit{PerMinute: 100, Burst: 20}, 5},
	PlanProfessional: {Limit{PerMinute: 500, Burst: 50}, 10},
	PlanEnterprise:   {Limit{PerMinute: 2000, Burst: 200}, 25},
}

// Plans returns all plan tiers, cheapest first.
func Plans() []Plan {
	return []Plan{PlanStarter, PlanProfessional, PlanEnterprise, PlanEnterprisePlus}
}

// ParsePlan returns the plan named s. Only the canonical lower-case names
// are accepted ("starter", "professional", "enterprise", "enterprise_plus").
func ParsePlan(s string) (Plan, error) {
	for _, p := range Plans() {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, 0, 4)
	for _, p := range Plans() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownPlan, s, strings.Join(names, ", "))
}

// PlanLimits returns the default request rate and concurrency of plan p.
// ok is false for PlanEnterprisePlus, whose values are negotiated per tenant
// and must come from the tenant's record, and for an unknown plan.
func PlanLimits(p Plan) (l Limit, concurrent int, ok bool) {
	v, ok := planTable[p]
	if !ok {
		return Limit{}, 0, false
	}
	return v.limit, v.concurrent, true
}

// endpointRule is one row of the per-endpoint limits table.
type endpointRule struct {
	name      string // as the spec writes it; also the rate-limit key suffix
	method    string
	path      string // lower case, no trailing slash
	family    bool   // path and everything below it ("/*")
	perMinute int
}

// The per-endpoint limits of spec section 8. They apply on top of the plan
// limit for every plan but Enterprise Plus (section 6); that policy
// is the caller's.
var endpointRules = []endpointRule{
	{name: "POST /v1/initiatives", method: "POST", path: "/v1/initiatives", perMinute: 10},
	{name: "POST /v1/business-cases", method: "POST", path: "/v1/business-cases", perMinute: 10},
	{name: "POST /v1/bulk/*", method: "POST", path: "/v1/bulk", family: true, perMinute: 5},
	{name: "GET /v1/analytics/*", method: "GET", path: "/v1/analytics", family: true, perMinute: 30},
	{name: "POST /v1/webhooks", method: "POST", path: "/v1/webhooks", perMinute: 20},
}

// EndpointLimit returns the per-endpoint limit that applies to a request, if
// any. path is the Fiber route template (c.Route().Path) or the raw request
// path; matching ignores case, trailing slashes and a query string, as the
// router does with its default settings, so a raw path cannot slip past by
// spelling. A family row ("/v1/bulk/*") matches its base and every path
// below it; HEAD counts as GET.
//
// name is the row of the spec's table ("POST /v1/bulk/*"), so keying the
// store by tenant+name gives all paths of a family one shared allowance. The
// limit is a plain "N per minute": Burst equals PerMinute.
func EndpointLimit(method, path string) (name string, l Limit, ok bool) {
	method = strings.ToUpper(method)
	if method == "HEAD" {
		method = "GET"
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	path = strings.ToLower(strings.TrimRight(path, "/"))
	for _, r := range endpointRules {
		if r.method != method {
			continue
		}
		if path == r.path || (r.family && strings.HasPrefix(path, r.path+"/")) {
			return r.name, Limit{PerMinute: r.perMinute, Burst: r.perMinute}, true
		}
	}
	return "", Limit{}, false
}
