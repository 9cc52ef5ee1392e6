package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// An AP is placed on its floor plan and taken off it through its own call
// (an extension): only the position changes, so a down AP stays down and
// keeps its radios; a bad body or a caller who does not see the AP changes
// nothing; the audit record gives the position before and after.
func TestPlaceAP(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor", 1)
		other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
		seen := time.Now().Add(-time.Hour).UnixMilli() // down: silent past the AP timeout
		a := &wnms.AP{MacAddress: "02:00:00:00:07:00", Name: "lobby", LocationID: floor.ID, Group: "AUTHORIZED",
			Radios: []wnms.Radio{{MacAddress: "02:00:00:00:07:01", Channel: 36, FrequencyBand: "BAND_5_GHZ"}}}
		if _, err := e.Store.UpsertAPs(context.Background(), 1, []*wnms.AP{a}, seen); err != nil {
			t.Fatal(err)
		}
		type status struct {
			BoxID        int64
			ActiveStatus bool
			LastSeen     int64
			Position     *wnms.Position
		}
		read := func() status {
			t.Helper()
			var page struct{ APStatus []status }
			e.Admin.Expect(200, "GET", "/V5/devices/apstatus?macaddress=02:00:00:00:07:00", nil).Decode(t, &page)
			if len(page.APStatus) != 1 {
				t.Fatalf("the AP: %+v", page)
			}
			return page.APStatus[0]
		}
		before := read()
		path := fmt.Sprintf("/V5/devices/manageddevices/%d/position", before.BoxID)
		_, op := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{site.ID.ID}})
		_, outsider := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Locations: []int64{other.ID.ID}})

		var placed struct {
			BoxID    int64
			Position *wnms.Position
		}
		op.Expect(200, "PUT", path, json.RawMessage(`{"position":{"x":12.5,"y":4}}`)).Decode(t, &placed)
		if placed.BoxID != before.BoxID || placed.Position == nil || *placed.Position != (wnms.Position{X: 12.5, Y: 4}) {
			t.Fatalf("the answer: %+v", placed)
		}
		got := read()
		if got.Position == nil || *got.Position != (wnms.Position{X: 12.5, Y: 4}) || got.ActiveStatus || got.LastSeen != before.LastSeen {
			t.Fatalf("after placing: %+v (before %+v): want the position, still down, last seen unchanged", got, before)
		}
		var aps []wnms.AP
		e.Admin.Expect(200, "GET", "/v2/devices/aps?macaddress=02:00:00:00:07:00", nil).Decode(t, &aps)
		if len(aps) != 1 || len(aps[0].Radios) != 1 || aps[0].Name != "lobby" {
			t.Errorf("placing changed the AP: %+v", aps)
		}
		recs, _, err := e.Store.AuditRecords(context.Background(), wnms.AuditQuery{CustomerID: 1, From: -1, To: -1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || recs[0].ResourceName != "lobby" || len(recs[0].Changes) != 2 {
			t.Errorf("the audit record of the placing: %+v", recs)
		} else {
			for i, want := range []struct{ field, after string }{{"position.x", "12.5"}, {"position.y", "4"}} {
				if c := recs[0].Changes[i]; c.Field != want.field || (len(c.Before) != 0 && string(c.Before) != "null") || string(c.After) != want.after {
					t.Errorf("the audit record's change %d: %s %s → %s, want %s → %s", i, c.Field, c.Before, c.After, want.field, want.after)
				}
			}
		}

		for _, bad := range []struct {
			name   string
			caller *apitest.Client
			path   string
			body   string
			status int
			code   string
		}{
			{"no position", op, path, `{}`, 400, wnms.ValidationFailed},
			{"x missing", op, path, `{"position":{"y":4}}`, 400, wnms.ValidationFailed},
			{"x negative", op, path, `{"position":{"x":-1,"y":4}}`, 400, wnms.ValidationFailed},
			{"y too far", op, path, `{"position":{"x":1,"y":100001}}`, 400, wnms.ValidationFailed},
			{"a position that is no object", op, path, `{"position":5}`, 400, wnms.InvalidRequestBody},
			{"not JSON", op, path, `{"position":`, 400, wnms.InvalidRequestBody},
			{"no such AP", op, "/V5/devices/manageddevices/999999/position", `{"position":{"x":1,"y":1}}`, 404, wnms.ResourceNotFound},
			{"an AP outside the caller's locations", outsider, path, `{"position":{"x":1,"y":1}}`, 404, wnms.ResourceNotFound},
		} {
			r := bad.caller.Do("PUT", bad.path, apitest.Raw{ContentType: "application/json", Body: []byte(bad.body)})
			if r.Status != bad.status || r.ErrorCode() != bad.code {
				t.Errorf("%s: %d %s, want %d %s; %s", bad.name, r.Status, r.ErrorCode(), bad.status, bad.code, r.Body)
			}
			if got := read(); got.Position == nil || *got.Position != (wnms.Position{X: 12.5, Y: 4}) {
				t.Errorf("%s changed the position: %+v", bad.name, got.Position)
			}
		}

		op.Expect(200, "PUT", path, json.RawMessage(`{"position":null}`)).Decode(t, &placed)
		if placed.Position != nil || read().Position != nil {
			t.Errorf("taken off the plan, the AP is still at %+v", read().Position)
		}
	})
}
