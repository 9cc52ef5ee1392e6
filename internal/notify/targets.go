package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Targets says which addresses a webhook may reach (decisions §23): never
// a link-local, multicast or unspecified address (cloud metadata services
// answer on link-local ones); a loopback or private address (127.0.0.0/8,
// ::1, RFC 1918, fc00::/7) or one of this server's own addresses only when
// AllowPrivate is set (--webhook-allow-private). It is checked when a
// webhook is saved, against what the host name resolves to then, and again
// at each connection, against the address actually dialled, so a name
// that resolves elsewhere later (DNS rebinding) reaches nothing more.
type Targets struct {
	AllowPrivate bool
}

// Refused says why a webhook may not reach ip, or "" when it may.
func (t Targets) Refused(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case wnms.ForbiddenWebhookAddr(ip):
		return "a link-local, multicast or unspecified address (cloud metadata services answer on link-local ones)"
	case t.AllowPrivate:
		return ""
	case wnms.PrivateWebhookAddr(ip):
		return "a loopback or private address (the server runs without --webhook-allow-private)"
	case ownAddr(ip):
		return "an address of this server (the server runs without --webhook-allow-private)"
	}
	return ""
}

// Private reports whether ip is an address that only
// --webhook-allow-private opens: loopback, private, or this server's own.
func Private(ip netip.Addr) bool {
	ip = ip.Unmap()
	return wnms.PrivateWebhookAddr(ip) || ownAddr(ip)
}

// ownAddr reports whether ip is an address of one of this host's
// interfaces.
func ownAddr(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		var n net.IP
		switch v := a.(type) {
		case *net.IPNet:
			n = v.IP
		case *net.IPAddr:
			n = v.IP
		}
		if own, ok := netip.AddrFromSlice(n); ok && own.Unmap() == ip {
			return true
		}
	}
	return false
}

// lookupWait bounds the name resolution of a webhook's host on saving.
const lookupWait = 3 * time.Second

// Check checks a webhook's URL (wnms.CheckWebhookURL) and every address
// its host has now: VALIDATION_FAILED naming why one may not be reached,
// or when the name does not resolve. private reports whether one is an
// address only --webhook-allow-private opens, which only a SUPERUSER sets.
func (t Targets) Check(ctx context.Context, rawURL string) (private bool, err error) {
	if err := wnms.CheckWebhookURL(rawURL); err != nil {
		return false, err
	}
	u, _ := url.Parse(rawURL) // parsed by CheckWebhookURL
	host := u.Hostname()
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, lookupWait)
		defer cancel()
		if ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil || len(ips) == 0 {
			return false, wnms.RuleBroken("url: the host name %q does not resolve", host)
		}
	}
	for _, ip := range ips {
		if why := t.Refused(ip); why != "" {
			return false, wnms.RuleBroken("url: %s is %s", host, why)
		}
		private = private || Private(ip)
	}
	return private, nil
}

// errRefused is the dial error for an address a webhook may not reach.
var errRefused = errors.New("webhook address refused")

// errorClass is the class of a failed attempt's error (the
// wnms.DeliveryError* constants): all that is kept of it.
func errorClass(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return wnms.DeliveryErrorTimeout
		}
		return wnms.DeliveryErrorDNS
	case errors.Is(err, errRefused):
		return wnms.DeliveryErrorConnect
	case errors.As(err, &recErr), errors.As(err, &alert), errors.As(err, &verify), errors.As(err, &unknown),
		errors.As(err, &hostname), errors.As(err, &invalid):
		return wnms.DeliveryErrorTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return wnms.DeliveryErrorTimeout
	}
	return wnms.DeliveryErrorConnect
}
