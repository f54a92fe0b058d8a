package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

// The parsers read bytes a remote system chose: whatever they are, no panic,
// and every row is either an actual or an Invalid with its row number.
func FuzzFeedCSV(f *testing.F) {
	f.Add([]byte("benefit_key,period,value\na,2025-01,1\n"))
	f.Add([]byte("\ufeffvalue,PERIOD,benefit_key,evidence_url\n1.5,2025-12,k,https://e.example.com/x\n\"a,b\n"))
	f.Add([]byte("benefit_key,period,value\nb\"x,2025-02,2\n,,\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, err := parseFeedCSV(body, 0)
		if err != nil {
			return
		}
		checkFeedItems(t, items)
	})
}

func FuzzFeedJSON(f *testing.F) {
	f.Add([]byte(`[{"benefit_key":"a","period":"2025-01","value":1}]`))
	f.Add([]byte(`{"data":[{"benefit_key":"a","period":"2025-01","value":"1.50","evidence_url":null},7,null,[]],"next":"/p2"}`))
	f.Add([]byte(`{"data":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, _, err := parseFeedJSON(body, 0)
		if err != nil {
			return
		}
		checkFeedItems(t, items)
	})
}

func checkFeedItems(t *testing.T, items []Item) {
	for _, it := range items {
		switch {
		case it.Invalid != "":
			if !strings.HasPrefix(it.Invalid, "row ") || it.Actual != nil {
				t.Fatalf("invalid item %+v", it)
			}
		case it.Actual == nil || it.Actual.BenefitKey == "" || !periodRe.MatchString(it.Actual.Period) || !decimalRe.MatchString(it.Actual.Value):
			t.Fatalf("bad actual %+v", it.Actual)
		}
	}
}

// Record mapping over arbitrary JSON objects never panics.
func FuzzCRMRecords(f *testing.F) {
	f.Add([]byte(`{"Id":"006x","SystemModstamp":"2026-01-01T00:00:00.000+0000","Name":"n","Account":{"Industry":"Banking"},"Owner":null}`))
	f.Add([]byte(`{"Id":"006x","SystemModstamp":"x","Account":"flat","Owner":{"Email":[1]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var rec map[string]json.RawMessage
		if json.Unmarshal(body, &rec) != nil {
			return
		}
		sf := &salesforce{fields: sfMapping{name: "Name", industry: "Account.Industry", segment: "Type", owner: "Owner.Email", description: "Description"}}
		_ = sf.item(rec)
		hs := &hubspot{props: hsMapping{name: "Name", owner: "Owner"}}
		_ = hs.item(hsDeal{ID: "1", Properties: rec})
	})
}
