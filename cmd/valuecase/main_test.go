package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/valuecase/valuecase/db/dbtest"
)

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

// The import checks every line before writing anything, then replaces the
// rows of the sources it names.
func TestImportBenchmarks(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	count := func() (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM peer_benchmark_datasets").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	bad := "industry,metric,value,source,year\nRetail,roi_percent,12.5,Survey A,2025\n,roi_percent,1,Survey A,2025\nretail,roi,1,Survey A,2025\nretail,roi_percent,NaN,Survey A,2025\nretail,roi_percent,1,Survey A,1999\n"
	_, err := importBenchmarks(ctx, pool, strings.NewReader(bad))
	for _, want := range []string{"line 3: industry", "line 4: metric", "line 5: value", "line 6: year"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad file: %v, want %q", err, want)
		}
	}
	if strings.Contains(fmt.Sprint(err), "line 2") || count() != 0 {
		t.Errorf("a good line was refused or something was written: %v", err)
	}
	for _, in := range []string{"", "industry,metric,value,source\n", "metric,industry,value,source,year\nretail,roi_percent,1,A,2025\n", "industry,metric,value,source,year\n"} {
		if _, err := importBenchmarks(ctx, pool, strings.NewReader(in)); err == nil {
			t.Errorf("%q imported", in)
		}
	}
	good := "industry,metric,value,source,year\n Retail ,roi_percent,12.5,Survey A,2025\nretail,payback_months,14,\"Survey, B\",2024\n"
	done, err := importBenchmarks(ctx, pool, strings.NewReader(good))
	if err != nil || done.Rows != 2 || done.Replaced != 0 || fmt.Sprint(done.Sources) != "[Survey A Survey, B]" || count() != 2 {
		t.Fatalf("%+v %v", done, err)
	}
	var industry string
	if err := pool.QueryRow(ctx, "SELECT industry FROM peer_benchmark_datasets WHERE source = 'Survey A'").Scan(&industry); err != nil || industry != "retail" {
		t.Errorf("industry %q %v", industry, err)
	}
	// Survey A again: its row is replaced, Survey B stays.
	done, err = importBenchmarks(ctx, pool, strings.NewReader("industry,metric,value,source,year\nretail,roi_percent,20,Survey A,2026\nretail,roi_percent,30,Survey A,2026\n"))
	if err != nil || done.Rows != 2 || done.Replaced != 1 || count() != 3 {
		t.Errorf("re-import: %+v %v (rows %d)", done, err, count())
	}
}
