package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// webhookFor reads one of the caller's customer's webhooks: another
// customer's is RESOURCE_NOT_FOUND, one at a location outside the
// caller's LOCATION_ACCESS_DENIED.
func (s *Server) webhookFor(ctx context.Context, c *wnms.Caller, id int64) (*wnms.Webhook, error) {
	w, err := s.Store.Webhook(ctx, c.CustomerID(), id)
	if err != nil {
		return nil, err
	}
	if _, err := access.LocationFor(ctx, s.Store, c, w.LocationID.ID); err != nil {
		return nil, err
	}
	return w, nil
}

// placeWebhook checks the webhook's location against the caller and
// records its path.
func (s *Server) placeWebhook(ctx context.Context, c *wnms.Caller, w *wnms.Webhook) error {
	if w.LocationID.Type == "" {
		w.LocationID.Type = wnms.LocalLocationID
	}
	l, err := access.LocationFor(ctx, s.Store, c, w.LocationID.ID)
	if err != nil {
		return err
	}
	w.LocationPath = l.Path
	return nil
}

// checkTarget checks the addresses a webhook's URL reaches now
// (notify.Targets.Check): a loopback, private or this server's own address
// is refused unless the server runs with --webhook-allow-private, and even
// then only a SUPERUSER may set one (ACCESS_DENIED).
func (s *Server) checkTarget(ctx context.Context, c *wnms.Caller, url string) error {
	private, err := s.Webhooks.Targets.Check(ctx, url)
	if err != nil {
		return err
	}
	if private && c.Role() != wnms.SuperUser {
		return wnms.Errorf(wnms.AccessDenied, "only a SUPERUSER may point a webhook at a loopback, private or this server's own address")
	}
	return nil
}

// listWebhooks is GET /webhooks: the customer's webhooks at locations the
// caller sees, secrets masked.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	hooks, err := s.Store.Webhooks(r.Context(), c.CustomerID())
	if err != nil {
		return err
	}
	scope, err := c.ScopePaths(r.Context())
	if err != nil {
		return err
	}
	out := []wnms.Webhook{}
	for _, h := range hooks {
		if wnms.UnderAny(h.LocationPath, scope) {
			out = append(out, h.Masked())
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// decodeWebhook reads a webhook body.
func decodeWebhook(w http.ResponseWriter, r *http.Request) (wnms.WebhookInput, error) {
	var in wnms.WebhookInput
	body, err := httpkit.ReadJSON(w, r, httpkit.MaxJSONBody)
	if err != nil {
		return in, err
	}
	return in, wnms.DecodeJSONObject(body, &in)
}

// createWebhook is PUT /webhooks: a new webhook, which takes the events
// raised from now on.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeWebhook(w, r)
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	h := &wnms.Webhook{CustomerID: c.CustomerID(), Enabled: true, Kinds: []string{},
		LocationID: wnms.LocalID(wnms.RootLocation)}
	if err := h.Apply(in); err != nil {
		return err
	}
	if err := s.checkTarget(r.Context(), c, h.URL); err != nil {
		return err
	}
	if err := s.placeWebhook(r.Context(), c, h); err != nil {
		return err
	}
	if err := s.Store.CreateWebhook(r.Context(), h); err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, h.Masked())
	return nil
}

// modifyWebhook is POST /webhooks/{id}: the fields given change; a masked
// secret keeps the stored one.
func (s *Server) modifyWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "id")
	if err != nil {
		return err
	}
	in, err := decodeWebhook(w, r)
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	if _, err := s.webhookFor(r.Context(), c, id); err != nil {
		return err
	}
	// A new URL is checked before the store's transaction: resolving its
	// name may take a while.
	if in.URL != nil {
		if err := s.checkTarget(r.Context(), c, strings.TrimSpace(*in.URL)); err != nil {
			return err
		}
	}
	h, err := s.Store.UpdateWebhook(r.Context(), c.CustomerID(), id, func(h *wnms.Webhook) error {
		if err := h.Apply(in); err != nil {
			return err
		}
		return s.placeWebhook(r.Context(), c, h)
	})
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, h.Masked())
	return nil
}

// deleteWebhook is DELETE /webhooks/{id}: the webhook and its deliveries.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "id")
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	if _, err := s.webhookFor(r.Context(), c, id); err != nil {
		return err
	}
	if err := s.Store.DeleteWebhook(r.Context(), c.CustomerID(), id); err != nil {
		return err
	}
	return noContent(w)
}

// deliveriesParams are a webhook's id and the page of its deliveries.
type deliveriesParams struct {
	ID int64
	page
}

func (p *deliveriesParams) decode(f *form) {
	p.ID = f.pathInt("id")
	p.Offset = f.int("offset", 0)
	p.Limit = f.int("limit", 100)
}

func (p *deliveriesParams) Validate(time.Time) error { return p.page.Validate() }

// deliveryPage is the answer of GET /webhooks/{id}/deliveries.
type deliveryPage struct {
	Deliveries   []wnms.Delivery `json:"deliveries"`
	TotalCount   int             `json:"totalCount"`
	PreviousLink *string         `json:"previousLink"`
	NextLink     *string         `json:"nextLink"`
}

// webhookDeliveries is GET /webhooks/{id}/deliveries: each event's
// delivery to the webhook, the latest changed first, with its attempts,
// last status, latency and error.
func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	var p deliveriesParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	if _, err := s.webhookFor(r.Context(), wnms.CallerFrom(r.Context()), p.ID); err != nil {
		return err
	}
	ds, total, err := s.Store.Deliveries(r.Context(), p.ID, int(p.Offset), int(p.Limit))
	if err != nil {
		return err
	}
	prev, next := p.page.links(total, func(from int64) string {
		return "/webhooks/" + strconv.FormatInt(p.ID, 10) + "/deliveries?offset=" + strconv.FormatInt(from, 10) +
			"&limit=" + strconv.FormatInt(p.Limit, 10)
	})
	httpkit.WriteJSON(w, http.StatusOK, deliveryPage{Deliveries: ds, TotalCount: total, PreviousLink: prev, NextLink: next})
	return nil
}

// testResult is the answer of POST /webhooks/{id}/test: the status and
// the class of a failure (wnms.DeliveryError*), never the receiver's own
// words.
type testResult struct {
	Delivered  bool   `json:"delivered"`
	Status     int    `json:"status"`
	LatencyMS  int64  `json:"latencyMs"`
	ErrorClass string `json:"errorClass"`
	Error      string `json:"error"`
}

// testWebhook is POST /webhooks/{id}/test: sends a test event now, signed
// like any other, and answers how the receiver answered. It is not stored,
// streamed or retried.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "id")
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	h, err := s.webhookFor(r.Context(), c, id)
	if err != nil {
		return err
	}
	now := s.Telemetry.Now()
	data, _ := json.Marshal(map[string]any{"webhookId": h.ID, "by": c.User.LoginID})
	ev := wnms.Event{ID: 0, Kind: wnms.EventTest, Timestamp: now.UnixMilli(), CustomerID: h.CustomerID, Data: data}
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	url, secret, err := s.Store.WebhookTarget(r.Context(), id)
	if err != nil {
		return err
	}
	res := s.Webhooks.Send(r.Context(), url, secret, 0, body)
	httpkit.WriteJSON(w, http.StatusOK, testResult{Delivered: res.Status >= 200 && res.Status < 300, Status: res.Status,
		LatencyMS: res.LatencyMS, ErrorClass: res.Error, Error: wnms.DeliveryErrorText(res.Error, res.Status)})
	return nil
}
