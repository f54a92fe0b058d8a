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
		"EXPORT_RETENTION":                "7d", // Go durations have no days
		"WEBHOOK_RETRY_DELAYS":            "5m,0s",
		"REDIS_URL":                       "127.0.0.1:6379", // a URL is required
		"TRUSTED_PROXIES":                 "10.0.0.0/8,proxy.internal",
		"SECRETS_KEY":                     "c2hvcnQ=", // 5 bytes
		"RETENTION_EVERY":                 "soon",
		"RETENTION_AUDIT_EVENTS":          "720h", // 30 days: below the 90-day floor of an audit log
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

func TestRedisURLAndTrustedProxies(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:6379/0", "rediss://:secret@cache.example.com:6380/1"} {
		t.Setenv("REDIS_URL", u)
		c, err := Load()
		if err != nil || c.RedisURL != u {
			t.Fatalf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:6379", "redis://", "redis://h:6379/db"} {
		t.Setenv("REDIS_URL", u)
		if _, err := Load(); err == nil {
			t.Fatalf("%s accepted", u)
		}
	}
	t.Setenv("REDIS_URL", "")
	t.Setenv("TRUSTED_PROXIES", "10.1.2.3/8, 192.168.0.1, ::1")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.TrustedProxies {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "10.0.0.0/8 192.168.0.1/32 ::1/128" {
		t.Fatalf("TrustedProxies = %v", got)
	}
}

func TestParseDelays(t *testing.T) {
	good := map[string][]time.Duration{
		"5m,25m":      {5 * time.Minute, 25 * time.Minute},
		" 1s , 2s ":   {time.Second, 2 * time.Second},
		"90s":         {90 * time.Second},
		"5m,,25m":     {5 * time.Minute, 25 * time.Minute}, // empty entries are skipped
		"1h30m,100ms": {90 * time.Minute, 100 * time.Millisecond},
	}
	for in, want := range good {
		got, err := ParseDelays(in)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: got %v, %v", in, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: got %v, want %v", in, got, want)
			}
		}
	}
	for _, in := range []string{"", ",", "5", "five minutes", "-5m", "0s", "5m,0s", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"} {
		if _, err := ParseDelays(in); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
}

// The configuration page's table must list every variable with its default.
func TestConfigurationPageListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, v := range Vars {
		def := "(none)"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		if !strings.Contains(page, "| `"+v.Name+"` | "+def+" |") {
			t.Errorf("docs/configuration.md lacks the row for %s with default %s", v.Name, def)
		}
	}
}
