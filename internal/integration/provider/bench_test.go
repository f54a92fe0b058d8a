package provider_test

import (
	"context"
	"testing"

	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/integration/provider/providertest"
)

// BenchmarkFetch10k: one full sync's fetching of 10,000 records, 200 a page
// (Jira: 100, its maximum), from each fake over loopback HTTP; the provider
// side of the integrations bench.
func BenchmarkFetch10k(b *testing.B) {
	const n = 10_000
	type fake struct {
		name  string
		url   string
		token string
		cfg   map[string]any
	}
	sf := providertest.NewSalesforce(b, providertest.Options{Records: n, PageSize: 200})
	hs := providertest.NewHubSpot(b, providertest.Options{Records: n})
	jr := providertest.NewJira(b, providertest.Options{Records: n})
	fd := providertest.NewFeed(b, providertest.Options{Records: n, PageSize: 200})
	fakes := []fake{
		{provider.Salesforce, sf.URL, sf.Token(), map[string]any{"instance_url": sf.URL, "page_size": 200}},
		{provider.HubSpot, hs.URL, hs.Token(), map[string]any{"instance_url": hs.URL, "page_size": 200}},
		{provider.Jira, jr.URL, jr.Token(), map[string]any{"instance_url": jr.URL, "initiative_id": initiativeID, "page_size": 100}},
		{provider.HTTPFeed, fd.URL, fd.Token(), map[string]any{"instance_url": fd.URL}},
	}
	for _, f := range fakes {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				c, err := provider.New(f.name, f.cfg, provider.Credentials{AccessToken: f.token, APIToken: f.token}, hc, nil)
				if err != nil {
					b.Fatal(err)
				}
				got, cursor := 0, ""
				for {
					p, err := c.Fetch(context.Background(), "", cursor)
					if err != nil {
						b.Fatal(err)
					}
					got += len(p.Items)
					if cursor = p.Next; cursor == "" {
						break
					}
				}
				if got != n {
					b.Fatalf("%d records", got)
				}
			}
		})
	}
}
