package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// A VIEWER reads the status of the APs at its locations (an extension):
// the page devices/manageddevices would answer, cut to what a status
// board shows, an AP silent past the timeout down.
func TestAPStatusForEveryRole(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor", 1)
		other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
		now := time.Now()
		for i, c := range []struct {
			name string
			loc  int64
			seen time.Time
		}{{"up-1", floor.ID.ID, now}, {"down-1", floor.ID.ID, now.Add(-time.Hour)}, {"elsewhere", other.ID.ID, now}} {
			a := &wnms.AP{MacAddress: fmt.Sprintf("02:00:00:00:0%d:00", i), Name: c.name, LocationID: wnms.LocalID(c.loc), Group: "AUTHORIZED"}
			if _, err := e.Store.UpsertAPs(context.Background(), 1, []*wnms.AP{a}, c.seen.UnixMilli()); err != nil {
				t.Fatal(err)
			}
		}
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{site.ID.ID}})
		viewer.Expect(403, "GET", "/V5/devices/manageddevices", nil)
		var page struct {
			APStatus []struct {
				Name         string
				ActiveStatus bool
				LocationID   wnms.LocationID
			}
			TotalCount int
		}
		viewer.Expect(200, "GET", "/V5/devices/apstatus?sortby=devicename&ascending=true", nil).Decode(t, &page)
		if page.TotalCount != 2 || len(page.APStatus) != 2 {
			t.Fatalf("the VIEWER sees %+v, want the two APs of its site", page)
		}
		for i, want := range []struct {
			name string
			up   bool
		}{{"down-1", false}, {"up-1", true}} {
			if got := page.APStatus[i]; got.Name != want.name || got.ActiveStatus != want.up || got.LocationID.ID != floor.ID.ID {
				t.Errorf("AP %d: %+v, want %s up=%v at the floor", i, got, want.name, want.up)
			}
		}
		viewer.Expect(200, "GET", "/V5/devices/apstatus?active=false", nil).Decode(t, &page)
		if page.TotalCount != 1 || page.APStatus[0].Name != "down-1" {
			t.Errorf("the APs down: %+v", page)
		}
		viewer.Expect(403, "GET", fmt.Sprintf("/V5/devices/apstatus?locationid=%d", other.ID.ID), nil)
		viewer.Expect(400, "GET", "/V5/devices/apstatus?limit=0", nil)
	})
}
