package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// MaxURLLength is the longest subscription URL accepted.
const MaxURLLength = 2048

// URLError explains why a subscription URL is not acceptable; its message is
// meant for the API client (422).
type URLError struct{ Reason string }

func (e *URLError) Error() string { return e.Reason }

// ValidateURL checks the form of a subscription URL: absolute http or https,
// at most 2048 characters, a host, no user information. It does not resolve
// the host; CheckURL does.
func ValidateURL(raw string) error {
	if raw == "" {
		return &URLError{"url is required"}
	}
	if len(raw) > MaxURLLength {
		return &URLError{fmt.Sprintf("url must be at most %d characters", MaxURLLength)}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return &URLError{"url is not a valid URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &URLError{"url must be an absolute http or https URL"}
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return &URLError{"url must name a host"}
	}
	if u.User != nil {
		return &URLError{"url must not contain user information (user:password@)"}
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
			return &URLError{"url has an invalid port"}
		}
	}
	return nil
}

// CheckURL validates raw like ValidateURL, then resolves its host and refuses
// it when any address it resolves to is not a public unicast address (unless
// allowPrivate). It is used when a subscription is created or changed, to
// answer with a clear message; the dial-time guard of NewHTTPClient is what
// actually enforces the rule on every delivery (DNS can change in between).
func CheckURL(ctx context.Context, raw string, allowPrivate bool) error {
	if err := ValidateURL(raw); err != nil {
		return err
	}
	if allowPrivate {
		return nil
	}
	u, _ := url.Parse(raw)
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := disallowedReason(ip); why != "" {
			return &URLError{fmt.Sprintf("url host %s is a %s address; webhooks can only target public addresses", host, why)}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return &URLError{fmt.Sprintf("url host %s could not be resolved", host)}
	}
	for _, ip := range addrs {
		if why := disallowedReason(ip); why != "" {
			return &URLError{fmt.Sprintf("url host %s resolves to %s, a %s address; webhooks can only target public addresses", host, ip.Unmap(), why)}
		}
	}
	return nil
}

// RefusedAddressError is returned (wrapped) by the dialer of NewHTTPClient
// when the resolved destination is not allowed.
type RefusedAddressError struct {
	Addr   netip.Addr
	Reason string
}

func (e *RefusedAddressError) Error() string {
	return fmt.Sprintf("destination address %s is refused (%s address)", e.Addr, e.Reason)
}

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

var blocked = func() []blockedRange {
	r := func(p, why string) blockedRange { return blockedRange{netip.MustParsePrefix(p), why} }
	return []blockedRange{
		// IPv4
		r("0.0.0.0/8", "unspecified"),
		r("10.0.0.0/8", "private"),
		r("100.64.0.0/10", "carrier-grade NAT"),
		r("127.0.0.0/8", "loopback"),
		r("169.254.0.0/16", "link-local"), // includes 169.254.169.254, cloud metadata
		r("172.16.0.0/12", "private"),
		r("192.0.0.0/24", "reserved"),
		r("192.168.0.0/16", "private"),
		r("198.18.0.0/15", "reserved"),
		r("224.0.0.0/4", "multicast"),
		r("240.0.0.0/4", "reserved"), // includes 255.255.255.255 broadcast
		// IPv6
		r("::/128", "unspecified"),
		r("::1/128", "loopback"),
		r("fc00::/7", "private"), // unique local, RFC 4193
		r("fe80::/10", "link-local"),
		r("fec0::/10", "site-local"),
		r("ff00::/8", "multicast"),
		r("100::/64", "discard"),
	}
}()

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// disallowedReason names the class of a non-public address, or "" when ip is
// allowed. IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
// (2002::/16) addresses are judged by the IPv4 address they embed.
func disallowedReason(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			if why := disallowedReason(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
				return why
			}
		case sixToFour.Contains(ip):
			if why := disallowedReason(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
				return why
			}
		}
	}
	for _, r := range blocked {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	return ""
}

// dialControl runs after name resolution, just before connect(2), with the
// address actually being dialled: the place a DNS answer cannot change any more.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedAddressError{Reason: "unparseable"}
	}
	if why := disallowedReason(ap.Addr()); why != "" {
		return &RefusedAddressError{Addr: ap.Addr().Unmap(), Reason: why}
	}
	return nil
}

// isRefused reports whether err comes from the dial-time address guard.
func isRefused(err error) (*RefusedAddressError, bool) {
	var re *RefusedAddressError
	if errors.As(err, &re) {
		return re, true
	}
	return nil, false
}
