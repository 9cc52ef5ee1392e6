package httpkit

import (
	"net"
	"net/netip"
	"strings"
)

// Hosts is the check of the Host header against DNS rebinding: a page of
// another site whose name is made to resolve to this server (often on
// 127.0.0.1) would otherwise reach it from the user's browser as its own
// origin. A request is served when its Host is an IP literal, localhost,
// empty, or a name the server was told it has (Names); any other name is
// refused when Names is set, or when the listener listens on a loopback
// address (Loopback), where the only browser that reaches it is on this
// machine and a name other than localhost can only be a rebinding one.
type Hosts struct {
	// Names are the host names the server answers to: "wnms.example.com",
	// ".example.com" or "*.example.com" for every name below example.com,
	// "*" for any name (no check).
	Names []string
	// Loopback: the listener listens on a loopback address.
	Loopback bool
}

// Allow reports whether a request with this Host header is served.
func (h *Hosts) Allow(hostHeader string) bool {
	host := hostHeader
	if hp, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = hp
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" || host == "localhost" {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	for _, n := range h.Names {
		n = strings.TrimSuffix(strings.ToLower(n), ".")
		switch {
		case n == "*" || n == host:
			return true
		case strings.HasPrefix(n, "*.") && strings.HasSuffix(host, n[1:]),
			strings.HasPrefix(n, ".") && strings.HasSuffix(host, n):
			return true
		}
	}
	return len(h.Names) == 0 && !h.Loopback
}
