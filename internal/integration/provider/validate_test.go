package provider_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/valuecase/valuecase/internal/integration/provider"
)

func TestValidate(t *testing.T) {
	type tc struct {
		provider  string
		cfg       map[string]any
		allowHTTP bool
		errs      map[string]string // nil: valid
	}
	cases := map[string]tc{
		"salesforce missing instance_url": {provider.Salesforce, map[string]any{}, false,
			map[string]string{"instance_url": "is required"}},
		"http without allowHTTP": {provider.Salesforce, map[string]any{"instance_url": "http://acme.my.salesforce.com"}, false,
			map[string]string{"instance_url": "must be https (http is allowed only when OUTBOUND_ALLOW_PRIVATE_NETWORKS=true)"}},
		"http with allowHTTP": {provider.Salesforce, map[string]any{"instance_url": "http://127.0.0.1:8080"}, true, nil},
		"user info": {provider.Jira, map[string]any{"instance_url": "https://me:pw@acme.atlassian.net", "initiative_id": initiativeID}, false,
			map[string]string{"instance_url": "must not contain user information (user:password@); send the token separately"}},
		"not a URL": {provider.HTTPFeed, map[string]any{"instance_url": "ftp://x"}, false,
			map[string]string{"instance_url": "must be an absolute https URL"}},
		"bad jira initiative_id": {provider.Jira, map[string]any{"instance_url": "https://acme.atlassian.net", "initiative_id": "42"}, false,
			map[string]string{"initiative_id": "must be an initiative id (a UUID)"}},
		"missing jira initiative_id": {provider.Jira, map[string]any{"instance_url": "https://acme.atlassian.net"}, false,
			map[string]string{"initiative_id": "is required"}},
		"bad jira project_key": {provider.Jira, map[string]any{"instance_url": "https://acme.atlassian.net", "initiative_id": initiativeID, "project_key": `VC" OR 1=1`}, false,
			map[string]string{"project_key": "must be a Jira project key (upper case letters, digits, _), or empty for all projects"}},
		"unknown key": {provider.HubSpot, map[string]any{"pipeline": "x"}, false,
			map[string]string{"pipeline": "is not a hubspot config key"}},
		"token in config": {provider.HubSpot, map[string]any{"oauth_token": "secret"}, false,
			map[string]string{"oauth_token": "is a secret: take it out with SplitSecret and pass it to New"}},
		"token under another name": {provider.Jira, map[string]any{"instance_url": "https://acme.atlassian.net", "initiative_id": initiativeID, "api_token": "x"}, false,
			map[string]string{"api_token": "is not a jira config key (the token goes in oauth_token)"}},
		"soql injection in a field": {provider.Salesforce, map[string]any{"instance_url": "https://acme.my.salesforce.com", "segment_field": "Type FROM User WHERE"}, false,
			map[string]string{"segment_field": "must be a Salesforce field API name (e.g. Industry__c or Account.Industry) or empty"}},
		"page size out of range": {provider.Salesforce, map[string]any{"instance_url": "https://acme.my.salesforce.com", "page_size": 50}, false,
			map[string]string{"page_size": "must be between 200 and 2000"}},
		"wrong type": {provider.HTTPFeed, map[string]any{"instance_url": 12}, false,
			map[string]string{"instance_url": "must be a string"}},
		"feed format": {provider.HTTPFeed, map[string]any{"instance_url": "https://bi.example.com/feed?x=1", "format": "xml"}, false,
			map[string]string{"format": "must be one of auto, json, csv"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, fe, err := provider.Validate(c.provider, c.cfg, c.allowHTTP)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fe, c.errs) {
				t.Fatalf("field errors %v, want %v", fe, c.errs)
			}
		})
	}
}

func TestValidateNormalisesWithDefaults(t *testing.T) {
	got, fe, err := provider.Validate(provider.HubSpot, map[string]any{"industry_property": " industry ", "page_size": float64(50)}, false)
	if err != nil || fe != nil {
		t.Fatal(err, fe)
	}
	want := map[string]any{
		"instance_url": "https://api.hubapi.com", "name_property": "dealname", "industry_property": "industry",
		"segment_property": "dealtype", "owner_property": "hubspot_owner_id", "description_property": "description", "page_size": 50,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("normalised %v, want %v", got, want)
	}
	got, _, _ = provider.Validate(provider.Jira, map[string]any{"instance_url": "https://acme.atlassian.net/", "initiative_id": "0B6F3F5E-8A7D-4C1E-9F3A-2D5B6C7E8F90"}, false)
	if got["instance_url"] != "https://acme.atlassian.net" || got["initiative_id"] != initiativeID || got["page_size"] != 50 {
		t.Fatalf("jira normalised %v", got)
	}
}

func TestUnknownProvider(t *testing.T) {
	if _, _, err := provider.Validate("pipedrive", map[string]any{}, false); !errors.Is(err, provider.ErrUnknownProvider) {
		t.Fatalf("Validate: %v", err)
	}
	if _, err := provider.New("pipedrive", map[string]any{}, "", hc); !errors.Is(err, provider.ErrUnknownProvider) {
		t.Fatalf("New: %v", err)
	}
	if got := provider.Names(); !reflect.DeepEqual(got, []string{"http_feed", "hubspot", "jira", "salesforce"}) {
		t.Fatalf("Names %v", got)
	}
}

func TestSplitSecret(t *testing.T) {
	rest, tok, set, fe := provider.SplitSecret(map[string]any{"instance_url": "https://x.example.com", "oauth_token": "00Dxx!AQ4AQ.abc"})
	if tok != "00Dxx!AQ4AQ.abc" || !set || fe != nil || len(rest) != 1 || rest["oauth_token"] != nil {
		t.Fatalf("%v %q %v %v", rest, tok, set, fe)
	}
	if _, _, set, _ := provider.SplitSecret(map[string]any{}); set {
		t.Fatal("absent token reported as set")
	}
	for _, bad := range []any{12, "has space", "line\nbreak", string(make([]byte, provider.MaxTokenLength+1))} {
		if _, _, _, fe := provider.SplitSecret(map[string]any{"oauth_token": bad}); fe["oauth_token"] == "" {
			t.Fatalf("token %q accepted", bad)
		}
	}
}
