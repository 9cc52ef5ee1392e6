package wnms

import (
	"context"
	"encoding/base64"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Webhook is where a customer's events are POSTed. Its secret signs every
// delivery and is masked on every read.
type Webhook struct {
	ID         int64      `json:"id"`
	URL        string     `json:"url"`
	Secret     string     `json:"secret"`
	Kinds      []string   `json:"kinds"`
	LocationID LocationID `json:"locationId"`
	Enabled    bool       `json:"enabled"`
	CreatedAt  int64      `json:"createdAt"`

	CustomerID   int64  `json:"-"`
	LocationPath string `json:"-"`
}

// WebhookInput is a webhook as PUT and POST take it; absent fields keep
// their value on POST (and take their default on PUT: every kind, the
// root, enabled).
type WebhookInput struct {
	URL        *string     `json:"url"`
	Secret     *string     `json:"secret"`
	Kinds      *[]string   `json:"kinds"`
	LocationID *LocationID `json:"locationId"`
	Enabled    *bool       `json:"enabled"`
}

// Masked is the webhook as a client sees it.
func (w Webhook) Masked() Webhook {
	w.Secret = SecretMask
	if w.Kinds == nil {
		w.Kinds = []string{}
	}
	return w
}

// Wants reports whether the webhook takes an event: its kind is selected
// (no kinds: every kind) and it concerns the webhook's location or a
// location below it ("" concerns the whole customer: only a webhook at
// the root takes it).
func (w *Webhook) Wants(e *Event) bool {
	if e.CustomerID != w.CustomerID || (len(w.Kinds) > 0 && !slices.Contains(w.Kinds, e.Kind)) {
		return false
	}
	path := e.LocationPath
	if path == "" {
		path = RootPath
	}
	return Under(path, w.LocationPath)
}

// Apply sets the fields in in on w and checks the result: a URL of http or
// https to a host that is not link-local (169.254.0.0/16, fe80::/10, where
// cloud metadata services answer), a secret of 16 to 256 bytes (one of the
// form whsec_<base64> must decode, see StandardWebhookKey), known kinds. A
// masked secret keeps the one stored.
func (w *Webhook) Apply(in WebhookInput) error {
	if in.URL != nil {
		w.URL = strings.TrimSpace(*in.URL)
	}
	if in.Secret != nil && *in.Secret != SecretMask {
		w.Secret = *in.Secret
	}
	if in.Kinds != nil {
		w.Kinds = []string{}
		for _, k := range *in.Kinds {
			i := slices.IndexFunc(EventKinds, func(s string) bool { return strings.EqualFold(s, k) })
			if i < 0 {
				return RuleBroken("kinds: unknown event kind %q (%s)", k, strings.Join(EventKinds, ", "))
			}
			if !slices.Contains(w.Kinds, EventKinds[i]) {
				w.Kinds = append(w.Kinds, EventKinds[i])
			}
		}
	}
	if in.LocationID != nil {
		w.LocationID = *in.LocationID
	}
	if in.Enabled != nil {
		w.Enabled = *in.Enabled
	}
	if err := CheckWebhookURL(w.URL); err != nil {
		return err
	}
	if len(w.Secret) < 16 || len(w.Secret) > 256 {
		return RuleBroken("secret: 16 to 256 characters, shared with the receiver to check signatures")
	}
	if _, err := StandardWebhookKey(w.Secret); err != nil {
		return err
	}
	return nil
}

// StandardWebhookPrefix marks a secret in the Standard Webhooks form:
// whsec_ and the key's bytes in base64.
const StandardWebhookPrefix = "whsec_"

// StandardWebhookKey is the HMAC key of a webhook's webhook-signature
// header (the Standard Webhooks signature): for a secret of the form
// whsec_<base64>, the decoded bytes, which must be 24 to 64 (the Standard
// Webhooks range) in standard base64 with its padding; for any other
// secret, its bytes as given (a Standard Webhooks verifier is then given
// whsec_ and the base64 of the secret). X-Wnms-Signature always uses the
// secret as given.
func StandardWebhookKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, StandardWebhookPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil {
		return nil, RuleBroken("secret: a secret starting with %s is a Standard Webhooks key: standard base64 after the prefix", StandardWebhookPrefix)
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, RuleBroken("secret: a %s key is 24 to 64 bytes, not %d", StandardWebhookPrefix, len(key))
	}
	return key, nil
}

// CheckWebhookURL checks a webhook's URL: absolute http or https, at most
// 2048 bytes, no user information, and not a link-local address.
func CheckWebhookURL(raw string) error {
	if raw == "" {
		return RuleBroken("url is required")
	}
	if len(raw) > 2048 {
		return RuleBroken("url: at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return RuleBroken("url: an absolute http or https URL, not %q", raw)
	}
	if u.User != nil {
		return RuleBroken("url: no user information: sign with the secret instead")
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil && ForbiddenWebhookAddr(ip) {
		return RuleBroken("url: %s is a link-local address (cloud metadata services answer there)", host)
	}
	return nil
}

// ForbiddenWebhookAddr reports whether a webhook may never be delivered
// to ip: link-local addresses (169.254.0.0/16, fe80::/10), where cloud
// metadata services answer, the unspecified address and multicast.
func ForbiddenWebhookAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip == netip.MustParseAddr("fd00:ec2::254")
}

// PrivateWebhookAddr reports whether ip is a loopback or private address
// (127.0.0.0/8, ::1, RFC 1918, fc00::/7): a webhook reaches one only when
// the server runs with --webhook-allow-private, and only a SUPERUSER sets
// one (decisions §23).
func PrivateWebhookAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate()
}

// Delivery is one event's delivery to one webhook, as its log shows it.
type Delivery struct {
	ID         int64  `json:"id"`
	EventID    int64  `json:"eventId"`
	Kind       string `json:"kind"`
	State      string `json:"state"` // pending, delivered, failed
	Attempts   int    `json:"attempts"`
	LastStatus int    `json:"lastStatus"`
	// LastErrorClass is how the last attempt failed, never the
	// receiver's own words: dns, connect, tls, timeout or status (a
	// status other than 2xx); "" when it did not fail. LastError says the
	// same in a sentence (DeliveryErrorText).
	LastErrorClass string `json:"lastErrorClass"`
	LastError      string `json:"lastError"`
	LastLatencyMS  int64  `json:"lastLatencyMs"`
	NextAttemptAt  int64  `json:"nextAttemptAt"`
	UpdatedAt      int64  `json:"updatedAt"`

	WebhookID int64  `json:"-"`
	Body      []byte `json:"-"`
	EventTime int64  `json:"-"`
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Claimed are deliveries a server claimed to send now, with their
// webhook's URL and secret. A delivery with no ID has no row yet: it was
// handed out by a queue pass straight from the outbox, and its row is
// written once, when its attempt has ended (FinishDeliveries).
type Claimed struct {
	WebhookID   int64
	URL, Secret string
	Deliveries  []*Delivery
	// Waiting is how many deliveries the webhook was given and not
	// claimed: they wait for a free attempt (ClaimDeliveries).
	Waiting int
	// Leased: this server holds the webhook's lease, and Mark is the
	// outbox event up to which it has now handed out or queued the
	// webhook's events. Left: events it wants are left in the outbox for
	// want of free attempts; a later pass hands them out.
	Leased bool
	Mark   int64
	Left   bool
}

// QueuePass is what a dispatcher tells a queue pass (QueueDeliveries).
type QueuePass struct {
	// Owner is the dispatcher's lease owner id; Until (ms) ends the
	// leases it takes or renews and the deliveries it claims.
	Owner string
	Until int64
	// Hook says, of a webhook, the outbox event up to which this
	// dispatcher handed out or queued its events under its lease (0:
	// none), the lowest event it handed out without a row whose result
	// is not recorded yet (0: none), and how many more deliveries it may
	// take now. taken: the lease was another's, or had run out, and is
	// taken now: the mark is forgotten.
	Hook func(webhookID int64, taken bool) (mark, low int64, free int)
}

// Cursor is where FinishDeliveries may move a webhook's durable cursor:
// every event up to it was queued as a row or recorded.
type Cursor struct {
	WebhookID, EventID int64
}

// The classes of a failed delivery attempt: what a delivery record and
// the test call say of a failure. Never the receiver's own text, so that
// a webhook cannot serve to read what another server answers.
const (
	DeliveryErrorDNS     = "dns"     // the receiver's name did not resolve
	DeliveryErrorConnect = "connect" // no connection (refused, unreachable, an address webhooks may not reach)
	DeliveryErrorTLS     = "tls"     // the TLS handshake failed
	DeliveryErrorTimeout = "timeout" // no answer in time
	DeliveryErrorStatus  = "status"  // an answer other than 2xx
)

// DeliveryErrorText says what a failure class means, with the status the
// receiver answered for class status; "" for no failure.
func DeliveryErrorText(class string, status int) string {
	switch class {
	case "":
		return ""
	case DeliveryErrorDNS:
		return "the receiver's host name did not resolve"
	case DeliveryErrorConnect:
		return "no connection to the receiver could be made"
	case DeliveryErrorTLS:
		return "the TLS handshake with the receiver failed"
	case DeliveryErrorTimeout:
		return "the receiver did not answer in time"
	case DeliveryErrorStatus:
		return "the receiver answered " + strconv.Itoa(status)
	}
	return "the attempt failed"
}

// DeliveryResult is how an attempt ended.
type DeliveryResult struct {
	Delivery  *Delivery
	Status    int    // the HTTP status, 0 when none came
	Error     string // its failure class, DeliveryErrorDNS ... ("" when a 2xx came)
	LatencyMS int64
	At        int64 // ms
	// Unsent: the delivery was claimed but not sent (its webhook failed
	// meanwhile, or it waited too long for a free attempt): its claim is
	// given back, nothing else changes.
	Unsent bool
}

// WebhookStore keeps webhooks and their deliveries.
type WebhookStore interface {
	Webhooks(ctx context.Context, customerID int64) ([]Webhook, error)
	Webhook(ctx context.Context, customerID, id int64) (*Webhook, error)
	CreateWebhook(ctx context.Context, w *Webhook) error
	UpdateWebhook(ctx context.Context, customerID, id int64, update func(w *Webhook) error) (*Webhook, error)
	DeleteWebhook(ctx context.Context, customerID, id int64) error
	Deliveries(ctx context.Context, webhookID int64, offset, limit int) ([]Delivery, int, error)
}
