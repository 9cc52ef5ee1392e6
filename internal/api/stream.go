package api

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Event stream timing: a comment line keeps an idle stream open through
// proxies, and each write must finish within the write deadline.
const (
	streamHeartbeat     = 15 * time.Second
	streamWriteDeadline = 30 * time.Second
	// DefaultStreamRecheck is how often an open stream checks that its
	// session still stands as it was (decisions §23: at least every 5 s).
	DefaultStreamRecheck = 5 * time.Second
)

// streamParams are the event stream's parameters: where to resume
// (Last-Event-ID, or lastEventId in the query for clients that cannot set
// a header) and which kinds to send.
type streamParams struct {
	LastID *int64
	Kinds  map[string]bool
}

func (p *streamParams) decode(f *form) {
	v := strings.TrimSpace(f.r.Header.Get("Last-Event-ID"))
	name := "Last-Event-ID"
	if v == "" {
		v, name = f.str("lastEventId"), "lastEventId"
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			f.fail(wnms.ParamError(name, "%s must be an event id (a non-negative integer), not %q", name, v))
			return
		}
		p.LastID = &n
	}
	for _, k := range f.strs("kinds") {
		for _, one := range strings.Split(k, ",") {
			kind, ok := oneOf(strings.TrimSpace(one), wnms.EventKinds...)
			if !ok {
				f.fail(wnms.ParamError("kinds", "unknown event kind %q (%s)", one, strings.Join(wnms.EventKinds, ", ")))
				return
			}
			if p.Kinds == nil {
				p.Kinds = map[string]bool{}
			}
			p.Kinds[kind] = true
		}
	}
}

// Validate has nothing left to check: decode read every value.
func (p *streamParams) Validate(time.Time) error { return nil }

// eventStream is GET /events/stream: Server-Sent Events of the events
// inside the caller's customer and locations, each with its id. A client
// that reconnects with Last-Event-ID gets every event after that one still
// in the outbox (24 hours) and then the live ones, none twice; without it,
// only events from now on.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) error {
	var p streamParams
	if err := s.bind(r, &p); err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	scope, err := c.ScopePaths(r.Context())
	if err != nil {
		return err
	}
	sub := s.Hub.Subscribe()
	defer func() { s.Hub.Unsubscribe(sub) }()
	rc := http.NewResponseController(w)
	// The stream reads nothing more: no read deadline may end it.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: bufio.NewWriterSize(w, 8<<10), rc: rc, customer: c.CustomerID(), scope: scope, kinds: p.Kinds}
	if err := out.comment("wnms event stream"); err != nil {
		return nil
	}
	last := sub.Start
	if p.LastID != nil {
		last = *p.LastID
	}
	ctx := r.Context()
	if last, err = s.catchUp(ctx, out, last); err != nil {
		return nil // the answer has begun: the client sees the stream end
	}
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	every := s.StreamRecheck
	if every <= 0 {
		every = DefaultStreamRecheck
	}
	recheck := time.NewTicker(every)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-recheck.C:
			if !s.sessionStands(r, c) {
				// The session ended (logout, expiry, revoked key, user
				// deleted or locked) or no longer grants what the stream
				// was opened with: the stream ends with it, and a client
				// that reconnects is authorized anew.
				return nil
			}
		case <-beat.C:
			if out.comment("") != nil {
				return nil
			}
		case e, ok := <-sub.C:
			if !ok {
				// Fallen behind the live events: resume from the outbox.
				sub = s.Hub.Subscribe()
				if last, err = s.catchUp(ctx, out, last); err != nil {
					return nil
				}
				continue
			}
			if e.ID <= last {
				continue
			}
			if err := out.event(e); err != nil {
				return nil
			}
			last = e.ID
			if len(sub.C) == 0 && out.flush() != nil {
				return nil
			}
		}
	}
}

// sessionStands reports whether the request's session is still alive and
// its user still has the role and allowed locations that opened the
// stream (c): a changed role or scope ends the stream rather than let it
// go on with rights the user no longer has, or without the new ones.
func (s *Server) sessionStands(r *http.Request, c *wnms.Caller) bool {
	now, err := httpkit.Authorize(s.Auth, r, anyRole)
	if err != nil || now.Role() != c.Role() || now.CustomerID() != c.CustomerID() ||
		len(now.User.AllowedLocations) != len(c.User.AllowedLocations) {
		return false
	}
	for i, l := range now.User.AllowedLocations {
		if was := c.User.AllowedLocations[i]; l.ID != was.ID || l.Type != was.Type {
			return false
		}
	}
	return true
}

// catchUp sends the outbox's events after last, page by page, and returns
// the last id sent or passed.
func (s *Server) catchUp(ctx context.Context, out *sseWriter, last int64) (int64, error) {
	for {
		evs, err := s.Store.EventsAfter(ctx, last, 500)
		if err != nil {
			return last, err
		}
		for _, e := range evs {
			if err := out.event(e); err != nil {
				return last, err
			}
			last = e.ID
		}
		if err := out.flush(); err != nil {
			return last, err
		}
		if len(evs) < 500 {
			return last, nil
		}
	}
}

// sseWriter writes the events a caller may see as Server-Sent Events.
type sseWriter struct {
	w        *bufio.Writer
	rc       *http.ResponseController
	customer int64
	scope    []string
	kinds    map[string]bool
}

func (o *sseWriter) deadline() {
	_ = o.rc.SetWriteDeadline(time.Now().Add(streamWriteDeadline))
}

// event writes e if the caller may see it and asked for its kind.
func (o *sseWriter) event(e *wnms.Event) error {
	if !e.Visible(o.customer, o.scope) || (o.kinds != nil && !o.kinds[e.Kind]) {
		return nil
	}
	if err := e.Encode(); err != nil {
		return err
	}
	o.deadline()
	o.w.WriteString("id: " + strconv.FormatInt(e.ID, 10) + "\nevent: " + e.Kind + "\ndata: ")
	o.w.Write(e.JSON)
	_, err := o.w.WriteString("\n\n")
	return err
}

// comment writes a comment line and flushes it.
func (o *sseWriter) comment(text string) error {
	o.deadline()
	o.w.WriteString(": " + text + "\n\n")
	return o.flush()
}

func (o *sseWriter) flush() error {
	o.deadline()
	if err := o.w.Flush(); err != nil {
		return err
	}
	return o.rc.Flush()
}
