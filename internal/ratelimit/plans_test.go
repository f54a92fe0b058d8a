package ratelimit

import (
	"errors"
	"testing"
)

func TestPlanLimits(t *testing.T) {
	tests := []struct {
		plan       Plan
		limit      Limit
		concurrent int
		ok         bool
	}{
		{PlanStarter, Limit{PerMinute: 100, Burst: 20}, 5, true},
		{PlanProfessional, Limit{PerMinute: 500, Burst: 50}, 10, true},
		{PlanEnterprise, Limit{PerMinute: 2000, Burst: 200}, 25, true},
		{PlanEnterprisePlus, Limit{}, 0, false}, // negotiated: the caller supplies them
		{Plan("standard"), Limit{}, 0, false},   // second tier table of the spec: not used
		{Plan(""), Limit{}, 0, false},
	}
	for _, tt := range tests {
		l, c, ok := PlanLimits(tt.plan)
		if l != tt.limit || c != tt.concurrent || ok != tt.ok {
			t.Errorf("PlanLimits(%q) = %+v, %d, %v; want %+v, %d, %v", tt.plan, l, c, ok, tt.limit, tt.concurrent, tt.ok)
		}
		if ok {
			if err := l.Validate(); err != nil {
				t.Errorf("%s: %v", tt.plan, err)
			}
		}
	}
}

func TestParsePlan(t *testing.T) {
	for _, s := range []string{"starter", "professional", "enterprise", "enterprise_plus"} {
		p, err := ParsePlan(s)
		if err != nil || string(p) != s {
			t.Errorf("ParsePlan(%q) = %q, %v", s, p, err)
		}
	}
	if got := Plans(); len(got) != 4 || got[0] != PlanStarter || got[3] != PlanEnterprisePlus {
		t.Errorf("Plans() = %v", got)
	}
	for _, s := range []string{"", "Starter", "ENTERPRISE", " starter", "starter ", "enterprise-plus", "enterpriseplus", "standard", "free"} {
		p, err := ParsePlan(s)
		if !errors.Is(err, ErrUnknownPlan) || p != "" {
			t.Errorf("ParsePlan(%q) = %q, %v; want ErrUnknownPlan", s, p, err)
		}
	}
}

func TestEndpointLimit(t *testing.T) {
	tests := []struct {
		method, path string
		name         string
		perMinute    int // 0: no endpoint limit
	}{
		{"POST", "/v1/initiatives", "POST /v1/initiatives", 10},
		{"POST", "/v1/initiatives/", "POST /v1/initiatives", 10},
		{"POST", "/V1/Initiatives", "POST /v1/initiatives", 10},
		{"post", "/v1/initiatives?x=1", "POST /v1/initiatives", 10},
		{"POST", "/v1/business-cases", "POST /v1/business-cases", 10},
		{"POST", "/v1/bulk/import", "POST /v1/bulk/*", 5},
		{"POST", "/v1/bulk/*", "POST /v1/bulk/*", 5},     // Fiber template
		{"POST", "/v1/bulk/:kind", "POST /v1/bulk/*", 5}, // Fiber template
		{"POST", "/v1/bulk/a/b/c", "POST /v1/bulk/*", 5},
		{"POST", "/v1/bulk", "POST /v1/bulk/*", 5},
		{"GET", "/v1/analytics/roi", "GET /v1/analytics/*", 30},
		{"GET", "/v1/analytics/benchmarks", "GET /v1/analytics/*", 30},
		{"HEAD", "/v1/analytics/trends", "GET /v1/analytics/*", 30},
		{"GET", "/v1/analytics/*", "GET /v1/analytics/*", 30},
		{"POST", "/v1/webhooks", "POST /v1/webhooks", 20},

		// Non-matches.
		{"GET", "/v1/initiatives", "", 0},
		{"POST", "/v1/initiatives/abc/status", "", 0},
		{"POST", "/v1/initiatives/:id/status", "", 0},
		{"PUT", "/v1/initiatives/abc", "", 0},
		{"GET", "/v1/business-cases", "", 0},
		{"POST", "/v1/business-cases/abc/approve", "", 0},
		{"GET", "/v1/bulk/import", "", 0},
		{"POST", "/v1/bulkimport", "", 0},
		{"POST", "/v1/analytics/roi", "", 0},
		{"GET", "/v1/analyticsx", "", 0},
		{"GET", "/v1/webhooks", "", 0},
		{"POST", "/v1/webhooks/abc/test", "", 0},
		{"POST", "/v2/initiatives", "", 0},
		{"POST", "/", "", 0},
		{"POST", "", "", 0},
	}
	for _, tt := range tests {
		name, l, ok := EndpointLimit(tt.method, tt.path)
		if tt.perMinute == 0 {
			if ok || name != "" || l != (Limit{}) {
				t.Errorf("EndpointLimit(%s %s) = %q %+v %v; want no match", tt.method, tt.path, name, l, ok)
			}
			continue
		}
		want := Limit{PerMinute: tt.perMinute, Burst: tt.perMinute}
		if !ok || name != tt.name || l != want {
			t.Errorf("EndpointLimit(%s %s) = %q %+v %v; want %q %+v", tt.method, tt.path, name, l, ok, tt.name, want)
		}
	}
}
