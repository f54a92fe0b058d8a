package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestDefaultsLoad(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatalf("defaults must load: %v", err)
	}
	if c.HTTPAddr != "127.0.0.1:8080" || c.OutboundAllowPrivateNetworks || len(c.WebhookRetryDelays) != 2 || c.WebhookRetryDelays[1] != 25*time.Minute {
		t.Fatalf("unexpected defaults: %+v", c)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	cases := map[string]string{
		"HTTP_ADDR":                       "nonsense",
		"DATABASE_URL":                    "mysql://x",
		"TEMPORAL_ADDRESS":                "nohostport",
		"AUTH_JWKS_URLS":                  "ftp://idp/jwks",
		"OUTBOUND_ALLOW_PRIVATE_NETWORKS": "maybe",
		"LOG_LEVEL":                       "loud",
		"CORS_ALLOWED_ORIGINS":            "https://app.example.com/path",
		"REVIEW_REMINDER_AFTER":           "-1h",
		"WEBHOOK_RETRY_DELAYS":            "5m,0s",
		"REDIS_URL":                       "http://x",
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := Load()
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("want an error naming %s, got %v", name, err)
			}
		})
	}
}

// The README's configuration table must list every variable with its default.
func TestReadmeListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, v := range Vars {
		def := "(none)"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		if !strings.Contains(readme, "| `"+v.Name+"` | "+def+" |") {
			t.Errorf("README configuration table lacks the row for %s with default %s", v.Name, def)
		}
	}
}
