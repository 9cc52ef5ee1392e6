package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/notify"
	"github.com/wnms/wnms/internal/wnms"
)

// sseEvent is one event read from the stream.
type sseEvent struct {
	ID    int64
	Kind  string
	Event wnms.Event
}

// sseStream is an open event stream.
type sseStream struct {
	events chan sseEvent
	cancel context.CancelFunc
	status int
	ctype  string
}

// openStream opens GET /V5/events/stream as c, resuming after lastID when
// it is not negative, and reads its events in the background.
func openStream(t *testing.T, e *apitest.Env, c *apitest.Client, lastID int64, query string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.HTTP.URL+"/new/webservice/V5/events/stream"+query, nil)
	req.Header.Set("Cookie", httpkit.SessionCookie+"="+c.Session())
	if lastID >= 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &sseStream{events: make(chan sseEvent, 1000), cancel: cancel, status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	t.Cleanup(cancel)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return s
	}
	// The stream's first line is a comment sent at once: reading it means
	// the server has subscribed.
	rd := bufio.NewReader(resp.Body)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("stream opened with %q, %v", line, err)
	}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		var ev sseEvent
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.ID, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.Kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev.Event); err != nil {
					t.Errorf("event data %q: %v", line, err)
				}
			case line == "" && ev.ID != 0:
				s.events <- ev
				ev = sseEvent{}
			}
		}
	}()
	return s
}

// next reads n events, failing after a deadline.
func (s *sseStream) next(t *testing.T, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("the stream ended after %d of %d events", len(out), n)
			}
			out = append(out, ev)
		case <-deadline:
			t.Fatalf("only %d of %d events within 10 s: %+v", len(out), n, out)
		}
	}
	return out
}

// none checks that no further event arrives within a short wait.
func (s *sseStream) none(t *testing.T, who string) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			t.Errorf("%s got an event it should not see: %+v", who, ev)
		}
	case <-time.After(300 * time.Millisecond):
	}
}

func startHub(t *testing.T, e *apitest.Env) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.API.Hub.Poll = 20 * time.Millisecond
	go e.API.Hub.Run(ctx)
	select {
	case <-e.API.Hub.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not start")
	}
}

// The stream sends the caller's events in id order; a VIEWER scoped to one
// site sees only that site's; another customer sees none; a client that
// reconnects with Last-Event-ID misses nothing and sees nothing twice.
func TestEventStream(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		startHub(t, e)
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{f.Site.ID.ID}})
		_, foreign := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		admin := openStream(t, e, e.Admin, -1, "")
		if admin.status != http.StatusOK || admin.ctype != "text/event-stream" {
			t.Fatalf("stream: status %d, %s", admin.status, admin.ctype)
		}
		site := openStream(t, e, viewer, -1, "")
		other := openStream(t, e, foreign, -1, "")
		ctx := context.Background()

		ap := func(box int64, loc *wnms.Location, up bool) {
			e.API.Hub.APChange(ctx, notify.AP{CustomerID: 1, BoxID: box, Name: fmt.Sprint("ap-", box), MacAddress: "00:11:22:33:44:55",
				LocationID: loc.ID.ID}, up)
		}
		ap(1, f.Floor, false)
		ap(2, f.OtherFloor, false)
		e.API.Hub.RaiseAnomaly(ctx, notify.Anomaly{CustomerID: 1, LocationID: f.Floor.ID.ID, Kind: "performance", Slot: 900000,
			AP: &wnms.AnomalyAP{BoxID: 1, Name: "ap-1", MacAddress: "00:11:22:33:44:55", Band: wnms.Band5GHz, Reason: wnms.APReasonLowRSSI,
				Observation: 14, Baseline: 1, Threshold: 9}})
		// Raised events are stored behind their raisers: the change below
		// is to follow them.
		if err := e.API.Hub.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		e.Admin.Expect(http.StatusOK, "PUT", "/V5/templates?locationid=0", profilesBody("stream"))
		ap(1, f.Floor, true)

		got := admin.next(t, 5)
		kinds := []string{}
		for i, ev := range got {
			kinds = append(kinds, ev.Kind)
			if i > 0 && ev.ID <= got[i-1].ID {
				t.Errorf("ids not increasing: %d after %d", ev.ID, got[i-1].ID)
			}
			if ev.Event.ID != ev.ID || ev.Event.Kind != ev.Kind || ev.Event.CustomerID != 1 {
				t.Errorf("event %+v does not match its id and kind", ev)
			}
		}
		if want := "apDown,apDown,anomaly,configChanged,apUp"; strings.Join(kinds, ",") != want {
			t.Errorf("admin saw %s, want %s", strings.Join(kinds, ","), want)
		}
		// The anomaly names the AP whose clients made it.
		var anomaly struct {
			Kind string          `json:"kind"`
			AP   *wnms.AnomalyAP `json:"ap"`
		}
		json.Unmarshal(got[2].Event.Data, &anomaly)
		if anomaly.Kind != "performance" || anomaly.AP == nil || anomaly.AP.BoxID != 1 || anomaly.AP.Reason != wnms.APReasonLowRSSI {
			t.Errorf("anomaly data %s", got[2].Event.Data)
		}
		var change struct {
			ResourceType string   `json:"resourceType"`
			Method       string   `json:"method"`
			Fields       []string `json:"changedFields"`
		}
		json.Unmarshal(got[3].Event.Data, &change)
		if change.ResourceType != "templates" || change.Method != "PUT" || len(change.Fields) == 0 {
			t.Errorf("configChanged data %s", got[3].Event.Data)
		}
		// The site's viewer: the floor's AP down, its anomaly and AP up;
		// not the other floor's AP, nor the customer-wide change.
		seen := site.next(t, 3)
		if seen[0].ID != got[0].ID || seen[1].ID != got[2].ID || seen[2].ID != got[4].ID {
			t.Errorf("the site's viewer saw %+v", seen)
		}
		site.none(t, "the site's viewer")
		other.none(t, "another customer")

		// Resume: read two, drop the connection, raise three more, and
		// reconnect after the second: the rest arrive once each.
		admin.cancel()
		ap(3, f.Floor, false)
		ap(3, f.Floor, true)
		e.API.Hub.UserLocked(ctx, &wnms.User{UserID: 9, LoginID: "locked-one", CustomerID: 1})
		resumed := openStream(t, e, e.Admin, got[1].ID, "")
		rest := resumed.next(t, 6)
		for i, ev := range rest[:3] {
			if ev.ID != got[i+2].ID {
				t.Errorf("resumed event %d is %d, want %d", i, ev.ID, got[i+2].ID)
			}
		}
		if rest[5].Kind != wnms.EventUserLocked || rest[3].Kind != wnms.EventAPDown || rest[4].Kind != wnms.EventAPUp {
			t.Errorf("resumed stream ends %+v", rest[3:])
		}
		resumed.none(t, "the resumed stream")

		// Kinds select what is sent; a bad Last-Event-ID or kind is 400.
		only := openStream(t, e, e.Admin, 0, "?kinds=userLocked")
		if ev := only.next(t, 1); ev[0].Kind != wnms.EventUserLocked {
			t.Errorf("kinds=userLocked sent %+v", ev)
		}
		for _, q := range []string{"?kinds=nope", "?lastEventId=x", "?lastEventId=-2"} {
			if r := e.Admin.Do("GET", "/V5/events/stream"+q, nil); r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, r.Status)
			}
		}
		if r := e.NewClient().Do("GET", "/V5/events/stream", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("no session: status %d", r.Status)
		}
	})
}

// Replicas on one PostgreSQL stream the same events, in the same order:
// an event raised on one replica reaches a client of the other.
func TestEventStreamReplicas(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		if b != apitest.Postgres {
			continue
		}
		t.Run(string(b), func(t *testing.T) {
			f := newAuthzFixture(t, b)
			a := f.E
			other := apitest.NewAt(t, b, a.Config)
			startHub(t, a)
			startHub(t, other)
			onA := openStream(t, a, a.Admin, -1, "")
			onB := openStream(t, other, other.LoginKey(t, a.AdminKeyID, a.AdminKeyValue), -1, "")
			ctx := context.Background()
			for i := range 5 {
				a.API.Hub.APChange(ctx, notify.AP{CustomerID: 1, BoxID: int64(i + 1), LocationID: f.Floor.ID.ID}, false)
				other.API.Hub.APChange(ctx, notify.AP{CustomerID: 1, BoxID: int64(i + 11), LocationID: f.Floor.ID.ID}, true)
			}
			ga, gb := onA.next(t, 10), onB.next(t, 10)
			for i := range ga {
				if ga[i].ID != gb[i].ID || ga[i].Kind != gb[i].Kind {
					t.Fatalf("replicas stream differently at %d: %+v and %+v", i, ga[i], gb[i])
				}
			}
		})
	}
}

// ended waits for the stream to end (its events may still arrive first),
// failing after a deadline.
func (s *sseStream) ended(t *testing.T, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("%s: the event stream is still open after 10 s", what)
		}
	}
}

// An open event stream ends when its session does, or when the session's
// user no longer has the role or locations that opened it: before, a
// stream opened before a logout, or before its user was deleted, kept
// receiving events.
func TestEventStreamEndsWithItsSession(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		f := newAuthzFixture(t, b)
		e := f.E
		e.API.StreamRecheck = 20 * time.Millisecond
		clock := apitest.NewClock(time.Now())
		e.UseClock(clock)
		startHub(t, e)
		user := func(role wnms.Role) (*wnms.User, *apitest.Client) {
			return e.NewUser(t, apitest.UserSpec{Role: role, Locations: []int64{f.Site.ID.ID}})
		}
		modify := func(u *wnms.User, fields map[string]any) {
			fields["userId"] = u.UserID
			e.Admin.Expect(http.StatusOK, "POST", "/V5/users", map[string]any{"user": fields})
		}
		for _, tc := range []struct {
			name string
			end  func(u *wnms.User, c *apitest.Client)
		}{
			{"logout", func(_ *wnms.User, c *apitest.Client) { c.Expect(http.StatusOK, "POST", "/logout", nil) }},
			{"user deleted", func(u *wnms.User, _ *apitest.Client) {
				e.Admin.Expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/V5/users/%d", u.UserID), nil)
			}},
			{"user locked", func(u *wnms.User, _ *apitest.Client) { modify(u, map[string]any{"userLockedState": "USER_LOCKED"}) }},
			{"role changed", func(u *wnms.User, _ *apitest.Client) { modify(u, map[string]any{"role": "OPERATOR"}) }},
			{"locations changed", func(u *wnms.User, _ *apitest.Client) {
				modify(u, map[string]any{"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": f.Other.ID.ID}}})
			}},
		} {
			u, c := user(wnms.Viewer)
			s := openStream(t, e, c, -1, "")
			if s.status != http.StatusOK {
				t.Fatalf("%s: stream status %d", tc.name, s.status)
			}
			// The stream works until the change.
			e.API.Hub.APChange(context.Background(), notify.AP{CustomerID: 1, BoxID: 1, LocationID: f.Floor.ID.ID}, false)
			s.next(t, 1)
			tc.end(u, c)
			s.ended(t, tc.name)
		}

		// A user's other changes leave the stream open.
		u, c := user(wnms.Viewer)
		s := openStream(t, e, c, -1, "")
		modify(u, map[string]any{"firstName": "Renamed"})
		e.API.Hub.APChange(context.Background(), notify.AP{CustomerID: 1, BoxID: 2, LocationID: f.Floor.ID.ID}, true)
		s.next(t, 1)

		// Expiry: the session's time runs out with no keep-alive.
		_, c = user(wnms.Viewer)
		s = openStream(t, e, c, -1, "")
		clock.Advance(time.Hour + time.Second)
		s.ended(t, "expiry")
	})
}
