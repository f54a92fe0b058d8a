package main

import "testing"

func TestTenantParams(t *testing.T) {
	cases := []struct {
		name, plan       string
		rpm, burst, conc int
		ok               bool
	}{
		{"Acme", "starter", 0, 0, 0, true},
		{"Acme", "enterprise", 0, 0, 0, true},
		{"Acme", "enterprise_plus", 5000, 500, 50, true},
		{"", "starter", 0, 0, 0, false},                 // name required
		{"Acme", "gold", 0, 0, 0, false},                // unknown plan
		{"Acme", "Starter", 0, 0, 0, false},             // plans are lower case
		{"Acme", "enterprise_plus", 0, 0, 0, false},     // negotiated limits required
		{"Acme", "enterprise_plus", 5000, 0, 50, false}, // all three
		{"Acme", "enterprise_plus", -1, 500, 50, false}, // positive
		{"Acme", "professional", 5000, 500, 50, false},  // only for enterprise_plus
	}
	for _, c := range cases {
		p, err := tenantParams(c.name, c.plan, c.rpm, c.burst, c.conc)
		if (err == nil) != c.ok {
			t.Errorf("%+v: want ok=%v, got %v", c, c.ok, err)
		}
		if err == nil && c.plan == "enterprise_plus" && (p.RequestsPerMinute == nil || *p.RequestsPerMinute != int32(c.rpm)) {
			t.Errorf("%+v: negotiated limits not carried: %+v", c, p)
		}
	}
}
