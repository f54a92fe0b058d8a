package webhook

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength)
	for raw, wantErr := range map[string]string{
		"https://example.com/hooks":       "",
		"http://example.com:8080/a?b=c#d": "",
		"https://[2606:4700::1111]/x":     "",
		"":                                "required",
		"example.com/hooks":               "absolute http or https",
		"/relative":                       "absolute http or https",
		"ftp://example.com/":              "absolute http or https",
		"javascript:alert(1)":             "absolute http or https",
		"https://user:pass@example.com/":  "user information",
		"https://user@example.com/":       "user information",
		"https:///nohost":                 "host",
		"https://:443/":                   "host",
		"https:example.com":               "host",
		"https://example.com:0/":          "invalid port",
		"https://example.com:70000/":      "invalid port",
		"https://exa mple.com/":           "not a valid URL",
		long:                              "at most 2048",
		"https://example.com/\x7f":        "not a valid URL",
		"HTTPS://EXAMPLE.COM/":            "",
	} {
		err := ValidateURL(raw)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%.60q: unexpected error %v", raw, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%.60q: error %v, want containing %q", raw, err, wantErr)
		}
	}
}

func TestDisallowedAddresses(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1":              "loopback",
		"127.255.0.9":            "loopback",
		"10.1.2.3":               "private",
		"172.16.0.1":             "private",
		"172.31.255.255":         "private",
		"192.168.1.1":            "private",
		"169.254.169.254":        "link-local",
		"100.64.0.1":             "carrier-grade NAT",
		"100.127.255.255":        "carrier-grade NAT",
		"0.0.0.0":                "unspecified",
		"224.0.0.1":              "multicast",
		"255.255.255.255":        "reserved",
		"::":                     "unspecified",
		"::1":                    "loopback",
		"fc00::1":                "private",
		"fd12:3456::1":           "private",
		"fe80::1":                "link-local",
		"fe80::1%eth0":           "link-local",
		"ff02::1":                "multicast",
		"::ffff:127.0.0.1":       "loopback",
		"::ffff:10.0.0.1":        "private",
		"::ffff:169.254.169.254": "link-local",
		"64:ff9b::a9fe:a9fe":     "link-local", // NAT64 of 169.254.169.254
		"2002:7f00:1::1":         "loopback",   // 6to4 of 127.0.0.1
		"8.8.8.8":                "",
		"172.32.0.1":             "",
		"100.128.0.1":            "",
		"93.184.216.34":          "",
		"2606:4700:4700::1111":   "",
		"::ffff:8.8.8.8":         "",
		"64:ff9b::808:808":       "",
	} {
		if got := disallowedReason(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: got %q, want %q", addr, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{
		"http://127.0.0.1/hook",
		"http://10.0.0.5/hook",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::1]:8080/hook",
		"http://[::ffff:127.0.0.1]/hook",
		"http://localhost:9000/hook", // resolves to loopback
		"http://100.64.1.1/hook",
	} {
		err := CheckURL(ctx, raw, false)
		var ue *URLError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "public addresses") {
			t.Errorf("%s: got %v, want a refusal naming public addresses", raw, err)
		}
	}
	if err := CheckURL(ctx, "http://localhost:9000/hook", false); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("localhost message should say loopback: %v", err)
	}
	// Public literals need no DNS and pass.
	for _, raw := range []string{"https://93.184.216.34/hook", "https://[2606:4700:4700::1111]/hook"} {
		if err := CheckURL(ctx, raw, false); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
	// allowPrivate lets private targets through, but never a malformed URL.
	if err := CheckURL(ctx, "http://localhost:9000/hook", true); err != nil {
		t.Errorf("allowPrivate: %v", err)
	}
	if err := CheckURL(ctx, "ftp://localhost/", true); err == nil {
		t.Error("allowPrivate must still validate the form")
	}
}
