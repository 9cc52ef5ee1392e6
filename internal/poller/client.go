package poller

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// HTTPTimeout bounds one request to an AP: connecting, sending and
// reading its whole answer (and how long the AP may take to begin
// answering). A poll's requests share the poll's deadline too (the
// poller's interval, at most MaxPollTime).
const HTTPTimeout = 10 * time.Second

// errRefusedAddress is a connection to an address no poller may reach.
var errRefusedAddress = errors.New("poller: refused address")

// NewHTTPClient returns the client a poller talks to its AP with: it
// connects only to addresses a poller may reach (not link-local, not a
// cloud metadata service, whatever the URL's name resolved to), and,
// when fingerprint is set, accepts only the certificate of that SHA-256
// (an AP's self-signed one) instead of the system's trusted CAs. A
// client per poller keeps one AP's connections apart from another's.
func NewHTTPClient(fingerprint []byte) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", errRefusedAddress, address)
			}
			if why := wnms.PollerAddressRefused(ap.Addr()); why != "" {
				return fmt.Errorf("%w: %s is %s", errRefusedAddress, ap.Addr(), why)
			}
			return nil
		}}
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: HTTPTimeout,
		// No proxy: APs are reached directly.
		Proxy: nil,
	}
	if fingerprint != nil {
		want := bytes.Clone(fingerprint)
		tr.TLSClientConfig = &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The pinned certificate is checked below instead of a chain:
			// an AP's certificate is self-signed, and names no address.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("poller: the AP presented no certificate")
				}
				if sum := sha256.Sum256(cs.PeerCertificates[0].Raw); !bytes.Equal(sum[:], want) {
					return fmt.Errorf("poller: the AP's certificate has SHA-256 %X, not the one pinned", sum)
				}
				return nil
			},
		}
	} else {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	// No client Timeout: it would also end a ubus event stream; each
	// exchange is bounded by its context (a poll's, or HTTPTimeout).
	return &http.Client{Transport: tr,
		// An AP that redirects elsewhere is not followed: the address
		// checked is the one configured.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
