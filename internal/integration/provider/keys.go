package provider

import (
	"regexp"

	"github.com/google/uuid"
)

var (
	sfField     = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]{0,79}\.)?[A-Za-z][A-Za-z0-9_]{0,79}$`)
	hsProperty  = regexp.MustCompile(`^[a-z0-9_]{1,100}$`)
	apiVersion  = regexp.MustCompile(`^v[0-9]{2}\.[0-9]$`)
	jiraProject = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`)
	emailish    = regexp.MustCompile(`^[^@\s]{1,64}@[^@\s]{1,255}$`)
)

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
}

var jiraKeys = []key{
	{name: "instance_url", kind: kString, req: true, check: checkInstanceURL(false), norm: trimSlash},
	{name: "initiative_id", kind: kString, req: true, check: func(v any, _ bool) string {
		if _, err := uuid.Parse(v.(string)); err != nil || len(v.(string)) != 36 {
			return "must be an initiative id (a UUID)"
		}
		return ""
	}, norm: func(v any) any { return uuid.MustParse(v.(string)).String() }},
	{name: "project_key", kind: kString, def: "", check: matches(jiraProject, "must be a Jira project key (upper case letters, digits, _), or empty for all projects", true)},
	{name: "email", kind: kString, def: "", check: matches(emailish, "must be the Atlassian account email, or empty to send the token as Bearer", true)},
	{name: "page_size", kind: kInt, def: 50, check: intRange(1, 100)},
}
