package api

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// auditParams are the parameters of the audit log.
type auditParams struct {
	openWindow
	LoginID      string
	ResourceType string
	page
}

func (p *auditParams) decode(f *form) {
	p.openWindow.decode(f)
	p.LoginID = f.str("loginid")
	p.ResourceType = f.str("resourcetype")
	p.Offset = f.int("offset", 0)
	p.Limit = f.int("limit", 100)
}

// Validate checks the window and the page.
func (p *auditParams) Validate(now time.Time) error {
	if err := p.openWindow.Validate(now); err != nil {
		return err
	}
	return p.page.Validate()
}

// auditPage is the answer of GET /auditlog.
type auditPage struct {
	AuditRecords []wnms.AuditRecord `json:"auditRecords"`
	TotalCount   int                `json:"totalCount"`
	PreviousLink *string            `json:"previousLink"`
	NextLink     *string            `json:"nextLink"`
}

// auditLog is GET /auditlog: the caller's customer's audit records, newest
// first, paged by offset and limit. A caller allowed at the root reads
// them all; one scoped to locations reads the records of calls at or
// below its locations (wnms.AuditRecord.LocationPath) and of its own
// calls, never those that concern the whole customer.
func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) error {
	var p auditParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	q := wnms.AuditQuery{CustomerID: c.CustomerID(),
		From: p.From, To: p.To, LoginID: p.LoginID, ResourceType: p.ResourceType, Offset: int(p.Offset), Limit: int(p.Limit)}
	scope, err := c.ScopePaths(r.Context())
	if err != nil {
		return err
	}
	if !slices.Contains(scope, wnms.RootPath) {
		q.Scope, q.Self = append([]string{}, scope...), c.User.UserID
	}
	recs, total, err := s.Store.AuditRecords(r.Context(), q)
	if err != nil {
		return err
	}
	prev, next := p.page.links(total, func(from int64) string {
		q := r.URL.Query()
		q.Set("offset", strconv.FormatInt(from, 10))
		q.Set("limit", strconv.FormatInt(p.Limit, 10))
		return "/auditlog?" + q.Encode()
	})
	httpkit.WriteJSON(w, http.StatusOK, auditPage{AuditRecords: recs, TotalCount: total, PreviousLink: prev, NextLink: next})
	return nil
}
