package provider_test

import (
	"errors"
	"reflect"
	"sort"
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
			map[string]string{"oauth_token": "is a secret: take it out with SplitSecrets and pass it to New"}},
		"token under another name": {provider.HubSpot, map[string]any{"api_token": "x"}, false,
			map[string]string{"api_token": "is not a hubspot config key (its secrets are oauth_token, refresh_token, client_id, client_secret)"}},
		"jira basic without email": {provider.Jira, map[string]any{"auth": "basic", "instance_url": "https://acme.atlassian.net", "initiative_id": initiativeID}, false,
			map[string]string{"email": "is required with auth basic (the Atlassian account of the API token)"}},
		"jql with its own order": {provider.Jira, map[string]any{"initiative_id": initiativeID, "jql": "issuetype = Epic ORDER BY created"}, false,
			map[string]string{"jql": "must not contain ORDER BY (the sync orders by updated)"}},
		"lookback out of range": {provider.Salesforce, map[string]any{"instance_url": "https://acme.my.salesforce.com", "lookback_minutes": 2000}, false,
			map[string]string{"lookback_minutes": "must be between 0 and 1440"}},
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
		"lookback_minutes": 5, "token_url": "",
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
	if _, err := provider.New("pipedrive", map[string]any{}, provider.Credentials{}, hc, nil); !errors.Is(err, provider.ErrUnknownProvider) {
		t.Fatalf("New: %v", err)
	}
	if got := provider.Names(); !reflect.DeepEqual(got, []string{"http_feed", "hubspot", "jira", "salesforce"}) {
		t.Fatalf("Names %v", got)
	}
}

func TestSplitSecrets(t *testing.T) {
	rest, sent, fe := provider.SplitSecrets(provider.Jira, map[string]any{"instance_url": "https://x.example.com", "oauth_token": "00Dxx!AQ4AQ.abc",
		"refresh_token": "rt-1234", "client_id": "cid-1234", "client_secret": "cs-1234", "api_token": "ATATT-1234", "email": "a@b.example"})
	want := provider.Credentials{AccessToken: "00Dxx!AQ4AQ.abc", RefreshToken: "rt-1234", ClientID: "cid-1234", ClientSecret: "cs-1234", APIToken: "ATATT-1234"}
	if sent != want || len(fe) != 0 || len(rest) != 2 || rest["oauth_token"] != nil || rest["api_token"] != nil {
		t.Fatalf("%v %+v %v", rest, sent, fe)
	}
	if _, sent, _ := provider.SplitSecrets(provider.HubSpot, map[string]any{}); sent != (provider.Credentials{}) {
		t.Fatal("absent secrets reported as sent")
	}
	// api_token is not a HubSpot secret: it stays in the config, which Validate then refuses.
	if rest, _, _ := provider.SplitSecrets(provider.HubSpot, map[string]any{"api_token": "abcdef"}); rest["api_token"] == nil {
		t.Fatal("api_token taken out of a hubspot config")
	}
	for _, bad := range []any{12, "has space", "line\nbreak", "abc", string(make([]byte, provider.MaxTokenLength+1))} {
		if _, _, fe := provider.SplitSecrets(provider.Salesforce, map[string]any{"refresh_token": bad}); fe["refresh_token"] == "" {
			t.Fatalf("secret %q accepted", bad)
		}
	}
}

func TestCheckCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, provider string
		cfg            map[string]any
		creds          provider.Credentials
		want           []string
	}{
		{"refresh without client", provider.Salesforce, nil, provider.Credentials{RefreshToken: "rt-1"}, []string{"client_id"}},
		{"salesforce secret optional", provider.Salesforce, nil, provider.Credentials{RefreshToken: "rt-1", ClientID: "cid"}, nil},
		{"hubspot needs secret", provider.HubSpot, nil, provider.Credentials{RefreshToken: "rt-1", ClientID: "cid"}, []string{"client_secret"}},
		{"jira basic takes no refresh token", provider.Jira, map[string]any{"auth": "basic"}, provider.Credentials{APIToken: "x", RefreshToken: "r", ClientID: "c", ClientSecret: "s"}, []string{"refresh_token"}},
		{"jira oauth takes no api token", provider.Jira, map[string]any{"auth": "oauth"}, provider.Credentials{APIToken: "x"}, []string{"api_token"}},
		{"jira oauth refresh", provider.Jira, map[string]any{"auth": "oauth"}, provider.Credentials{RefreshToken: "r", ClientID: "c", ClientSecret: "s"}, nil},
	} {
		fe := provider.CheckCredentials(tc.provider, tc.cfg, tc.creds)
		var got []string
		for k := range fe {
			got = append(got, k)
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: field errors %v, want %v", tc.name, fe, tc.want)
		}
	}
}

func TestCalledURLs(t *testing.T) {
	jira := func(cfg map[string]any) map[string]any {
		cfg["initiative_id"] = initiativeID
		out, fe, err := provider.Validate(provider.Jira, cfg, false)
		if err != nil || len(fe) > 0 {
			t.Fatal(err, fe)
		}
		return out
	}
	for _, tc := range []struct {
		name, provider string
		cfg            map[string]any
		want           []string
	}{
		{"jira basic: the site only", provider.Jira, jira(map[string]any{"instance_url": "https://acme.atlassian.net", "email": "a@acme.test"}),
			[]string{"https://acme.atlassian.net"}},
		{"jira oauth: gateway and token endpoint", provider.Jira, jira(map[string]any{"auth": "oauth", "instance_url": "https://acme.atlassian.net"}),
			[]string{"https://api.atlassian.com", "https://auth.atlassian.com/oauth/token"}},
		{"salesforce with a token url", provider.Salesforce, map[string]any{"instance_url": "https://acme.my.salesforce.com", "token_url": "https://login.salesforce.com/services/oauth2/token"},
			[]string{"https://acme.my.salesforce.com", "https://login.salesforce.com/services/oauth2/token"}},
	} {
		if got := provider.CalledURLs(tc.provider, tc.cfg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
