package provider

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
)

var (
	sfField     = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]{0,79}\.)?[A-Za-z][A-Za-z0-9_]{0,79}$`)
	hsProperty  = regexp.MustCompile(`^[a-z0-9_]{1,100}$`)
	apiVersion  = regexp.MustCompile(`^v[0-9]{2}\.[0-9]$`)
	jiraProject = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`)
	emailish    = regexp.MustCompile(`^[^@\s]{1,64}@[^@\s]{1,255}$`)
	cloudIDRe   = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z-]{0,63}$`)
	orderByRe   = regexp.MustCompile(`(?i)\border\s+by\b`)
)

// lookbackKey is lookback_minutes: how far before the watermark an
// incremental sync starts reading (search indexes lag writes).
var lookbackKey = key{name: "lookback_minutes", kind: kInt, def: 5, check: intRange(0, 1440)}

// tokenURLKey is token_url: the OAuth token endpoint (default per provider).
var tokenURLKey = key{name: "token_url", kind: kString, def: "", check: optionalURL, norm: trimSlash}

func optionalURL(v any, allowHTTP bool) string {
	if v.(string) == "" {
		return ""
	}
	return checkInstanceURL(false)(v, allowHTTP)
}

// MaxJQLLength bounds config jql.
const MaxJQLLength = 1000

func checkJQL(v any, _ bool) string {
	s := v.(string)
	switch {
	case s == "":
		return "is required (e.g. issuetype = Epic)"
	case len(s) > MaxJQLLength:
		return fmt.Sprintf("must be at most %d characters", MaxJQLLength)
	case orderByRe.MatchString(s):
		return "must not contain ORDER BY (the sync orders by updated)"
	case strings.ContainsAny(s, "\x00\r\n\t"):
		return "must be one line of JQL"
	}
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth < 0 {
			break
		}
	}
	if depth != 0 {
		return "has unbalanced parentheses"
	}
	return ""
}

func matches(re *regexp.Regexp, msg string, empty bool) func(any, bool) string {
	return func(v any, _ bool) string {
		s := v.(string)
		if s == "" && empty {
			return ""
		}
		if !re.MatchString(s) {
			return msg
		}
		return ""
	}
}

const sfFieldMsg = "must be a Salesforce field API name (e.g. Industry__c or Account.Industry) or empty"

var salesforceKeys = []key{
	{name: "instance_url", kind: kString, req: true, check: checkInstanceURL(false), norm: trimSlash},
	{name: "api_version", kind: kString, def: "v60.0", check: matches(apiVersion, "must look like v60.0", false)},
	{name: "name_field", kind: kString, def: "Name", check: matches(sfField, sfFieldMsg, false)},
	{name: "industry_field", kind: kString, def: "Account.Industry", check: matches(sfField, sfFieldMsg, true)},
	{name: "segment_field", kind: kString, def: "Type", check: matches(sfField, sfFieldMsg, true)},
	{name: "owner_field", kind: kString, def: "Owner.Email", check: matches(sfField, sfFieldMsg, true)},
	{name: "description_field", kind: kString, def: "Description", check: matches(sfField, sfFieldMsg, true)},
	{name: "page_size", kind: kInt, def: 2000, check: intRange(200, 2000)},
	lookbackKey,
	tokenURLKey,
}

const hsPropMsg = "must be a HubSpot property internal name (lower case letters, digits, _) or empty"

var hubspotKeys = []key{
	{name: "instance_url", kind: kString, def: "https://api.hubapi.com", check: checkInstanceURL(false), norm: trimSlash},
	{name: "name_property", kind: kString, def: "dealname", check: matches(hsProperty, hsPropMsg, false)},
	{name: "industry_property", kind: kString, def: "", check: matches(hsProperty, hsPropMsg, true)},
	{name: "segment_property", kind: kString, def: "dealtype", check: matches(hsProperty, hsPropMsg, true)},
	{name: "owner_property", kind: kString, def: "hubspot_owner_id", check: matches(hsProperty, hsPropMsg, true)},
	{name: "description_property", kind: kString, def: "description", check: matches(hsProperty, hsPropMsg, true)},
	{name: "page_size", kind: kInt, def: 100, check: intRange(1, 200)},
	lookbackKey,
	tokenURLKey,
}

var jiraKeys = []key{
	{name: "auth", kind: kString, check: oneOf("basic", "oauth")}, // default: basic with email, else oauth (jiraDefaults)
	{name: "instance_url", kind: kString, check: optionalURL, norm: trimSlash},
	{name: "cloud_id", kind: kString, def: "", check: matches(cloudIDRe, "must be the site's cloud id (letters, digits, -), or empty to look it up", true)},
	{name: "gateway_url", kind: kString, def: "https://api.atlassian.com", check: checkInstanceURL(false), norm: trimSlash},
	{name: "token_url", kind: kString, def: "https://auth.atlassian.com/oauth/token", check: checkInstanceURL(false), norm: trimSlash},
	{name: "jql", kind: kString, def: "issuetype = Epic", check: checkJQL},
	{name: "initiative_id", kind: kString, req: true, check: func(v any, _ bool) string {
		if _, err := uuid.Parse(v.(string)); err != nil || len(v.(string)) != 36 {
			return "must be an initiative id (a UUID)"
		}
		return ""
	}, norm: func(v any) any { return uuid.MustParse(v.(string)).String() }},
	{name: "project_key", kind: kString, def: "", check: matches(jiraProject, "must be a Jira project key (upper case letters, digits, _), or empty for all projects", true)},
	{name: "email", kind: kString, def: "", check: matches(emailish, "must be the Atlassian account email (auth basic)", true)},
	{name: "page_size", kind: kInt, def: 50, check: intRange(1, 100)},
	lookbackKey,
}

// jiraDefaults fills auth (basic when an email is set, else oauth) and
// checks what each needs: basic the site (instance_url) and email.
func jiraDefaults(out map[string]any, fe map[string]string) {
	auth, _ := out["auth"].(string)
	email, _ := out["email"].(string)
	site, _ := out["instance_url"].(string)
	if auth == "" {
		auth = "oauth"
		if email != "" {
			auth = "basic"
		}
		out["auth"] = auth
	}
	if auth == "basic" {
		if site == "" && fe["instance_url"] == "" {
			fe["instance_url"] = "is required with auth basic (the site, https://<your-domain>.atlassian.net)"
		}
		if email == "" && fe["email"] == "" {
			fe["email"] = "is required with auth basic (the Atlassian account of the API token)"
		}
	}
	if site == "" {
		delete(out, "instance_url")
	}
}
