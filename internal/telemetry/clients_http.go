package telemetry

import (
	"context"
	"net/http"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// MaxClientList is the most clients GET /devices/clients answers;
// X-Total-Count says how many matched.
const MaxClientList = 100

// clientRoutes registers the client calls.
func (s *Service) clientRoutes(handle func(pattern string, rule access.Rule, h httpkit.HandlerFunc)) {
	handle("POST /ingest/clientstats", access.SuAdOp, s.ingest("clientstats", s.IngestStats))
	handle("GET /devices/clients", access.AnyRole, s.listClients)
	handle("GET /devices/clients/{offset}/{limit}", access.AnyRole, s.pageClients)
	handle("GET /devices/clients/{boxId}/observingmanageddevices", access.AnyRole, s.observers)
}

// clientQuery reads the filters of the client lists: locationid, ssid,
// active, filter (with operator), and the node.
func (s *Service) clientQuery(ctx context.Context, r *http.Request, c *wnms.Caller) (*wnms.Location, ClientQuery, error) {
	var q ClientQuery
	if err := httpkit.LocalNode(r); err != nil {
		return nil, q, err
	}
	at, err := s.locationParam(r, c)
	if err != nil {
		return nil, q, err
	}
	q.SSID, _ = httpkit.QueryValue(r, "ssid")
	if _, given := httpkit.QueryValue(r, "active"); given {
		active, err := httpkit.QueryBool(r, "active", false)
		if err != nil {
			return nil, q, err
		}
		q.Active = &active
	}
	op, _ := httpkit.QueryValue(r, "operator")
	f, ok, err := ParseFilters(r.URL.Query()["filter"], op, ClientProperties)
	if err != nil {
		return nil, q, err
	}
	if ok {
		q.Filter = &f
	}
	return at, q, nil
}

// listClients is GET /devices/clients: at most MaxClientList clients, last
// seen first, with X-Total-Count.
func (s *Service) listClients(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	at, q, err := s.clientQuery(r.Context(), r, c)
	if err != nil {
		return err
	}
	q.Limit = MaxClientList
	clients, total, err := s.Clients(r.Context(), c, at, q)
	if err != nil {
		return err
	}
	writeCapped(w, clients, total)
	return nil
}

// clientPage is the answer of the paged client list.
type clientPage struct {
	ClientList   []Client `json:"clientList"`
	TotalCount   int      `json:"totalCount"`
	PreviousLink *string  `json:"previousLink"`
	NextLink     *string  `json:"nextLink"`
}

// pageClients is GET /devices/clients/{offset}/{limit}.
func (s *Service) pageClients(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	offset, limit, err := pathPage(r)
	if err != nil {
		return err
	}
	at, q, err := s.clientQuery(r.Context(), r, c)
	if err != nil {
		return err
	}
	q.Offset, q.Limit = int(offset), int(limit)
	clients, total, err := s.Clients(r.Context(), c, at, q)
	if err != nil {
		return err
	}
	page := clientPage{ClientList: clients, TotalCount: total}
	page.PreviousLink, page.NextLink = pageLinks(offset, limit, total, func(from int64) string {
		return pathLink("/devices/clients", from, limit, r)
	})
	httpkit.WriteJSON(w, http.StatusOK, page)
	return nil
}

// observers is GET /devices/clients/{boxId}/observingmanageddevices.
func (s *Service) observers(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "boxId")
	if err != nil {
		return err
	}
	if err := httpkit.LocalNode(r); err != nil {
		return err
	}
	out, err := s.Observers(r.Context(), wnms.CallerFrom(r.Context()), id)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}
