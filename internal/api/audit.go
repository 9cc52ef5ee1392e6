package api

import (
	"net/http"
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
// first, paged by offset and limit.
func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) error {
	var p auditParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	recs, total, err := s.Store.AuditRecords(r.Context(), wnms.AuditQuery{CustomerID: c.CustomerID(),
		From: p.From, To: p.To, LoginID: p.LoginID, ResourceType: p.ResourceType, Offset: int(p.Offset), Limit: int(p.Limit)})
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
