package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

type tree struct {
	RootLocationID wnms.LocationID           `json:"rootLocationId"`
	Locations      map[string]*wnms.Location `json:"locations"`
}

func getTree(t *testing.T, c *apitest.Client) tree {
	t.Helper()
	var tr tree
	c.Expect(200, "GET", "/V2/locations/tree", nil).Decode(t, &tr)
	return tr
}

func (tr tree) byID(id int64) *wnms.Location { return tr.Locations[wnms.LocalID(id).Key()] }

func createLoc(t *testing.T, c *apitest.Client, parent int64, typ, name string) wnms.Location {
	t.Helper()
	var l wnms.Location
	c.Expect(200, "PUT", "/V2/locations", map[string]any{
		"parentLocation": map[string]any{"type": "locallocationid", "id": parent},
		"location":       map[string]any{"type": typ, "name": name, "timezoneId": "Europe/Berlin"},
	}).Decode(t, &l)
	return l
}

func TestLocationTreeLifecycle(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		tr := getTree(t, e.Admin)
		if tr.RootLocationID.ID != 0 || tr.byID(0) == nil || tr.byID(-1) == nil || !tr.byID(-1).DefaultLocation || tr.byID(0).ParentID != nil {
			t.Fatalf("fresh tree: %+v", tr)
		}
		hq := createLoc(t, e.Admin, 0, "folderlocation", "HQ")
		b1 := createLoc(t, e.Admin, hq.ID.ID, "folderlocation", "Building 1")
		f1 := createLoc(t, e.Admin, b1.ID.ID, "floorlocation", "Floor 1")
		if f1.Children != nil || f1.TimezoneID != "Europe/Berlin" || f1.ParentID.ID != b1.ID.ID {
			t.Errorf("floor: %+v", f1)
		}
		tr = getTree(t, e.Admin)
		if kids := tr.byID(hq.ID.ID).Children; kids == nil || len(*kids) != 1 || (*kids)[0].ID != b1.ID.ID {
			t.Errorf("HQ children: %+v", kids)
		}
		// Rename, tag and move, carrying the subtree.
		annex := createLoc(t, e.Admin, 0, "folderlocation", "Annex")
		var moved wnms.Location
		e.Admin.Expect(200, "POST", "/V2/locations", map[string]any{"id": map[string]any{"type": "locallocationid", "id": b1.ID.ID},
			"parentId": map[string]any{"type": "locallocationid", "id": annex.ID.ID}, "name": "Building One", "locationTag": "north"}).Decode(t, &moved)
		if moved.Name != "Building One" || *moved.LocationTag != "north" || moved.ParentID.ID != annex.ID.ID {
			t.Errorf("moved: %+v", moved)
		}
		// A viewer scoped to Annex sees the moved floor, and HQ only as an ancestor-less sibling: not at all.
		_, v := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{annex.ID.ID}})
		vt := getTree(t, v)
		if vt.byID(f1.ID.ID) == nil || !vt.byID(f1.ID.ID).AccessibleToUser {
			t.Error("scoped viewer does not see the moved floor")
		}
		if vt.byID(hq.ID.ID) != nil {
			t.Error("scoped viewer sees HQ")
		}
		if r := vt.byID(0); r == nil || r.AccessibleToUser {
			t.Errorf("scoped viewer's root should be present as an inaccessible ancestor: %+v", r)
		}
		// Delete: not with children, then leaf first.
		if r := e.Admin.Expect(409, "DELETE", fmt.Sprintf("/V2/locations/%d", annex.ID.ID), nil); r.ErrorCode() != wnms.Conflict {
			t.Errorf("delete with children: %s", r.ErrorCode())
		}
		e.Admin.Expect(204, "DELETE", fmt.Sprintf("/V2/locations/%d", f1.ID.ID), nil)
		e.Admin.Expect(204, "DELETE", fmt.Sprintf("/V2/locations/%d", b1.ID.ID), nil)
		e.Admin.Expect(404, "DELETE", fmt.Sprintf("/V2/locations/%d", b1.ID.ID), nil)
		if getTree(t, e.Admin).byID(b1.ID.ID) != nil {
			t.Error("deleted location still in the tree")
		}
	})
}

func TestLocationValidation(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		hq := createLoc(t, e.Admin, 0, "folderlocation", "HQ")
		floor := createLoc(t, e.Admin, hq.ID.ID, "floorlocation", "F1")
		put := func(parent any, loc map[string]any) map[string]any {
			return map[string]any{"parentLocation": parent, "location": loc}
		}
		id := func(n int64) map[string]any { return map[string]any{"type": "locallocationid", "id": n} }
		cases := []struct {
			name   string
			method string
			path   string
			body   any
			status int
			code   string
		}{
			{"under a floor", "PUT", "/V2/locations", put(id(floor.ID.ID), map[string]any{"type": "folderlocation", "name": "x"}), 400, wnms.ValidationFailed},
			{"under unknown", "PUT", "/V2/locations", put(id(-1), map[string]any{"type": "folderlocation", "name": "x"}), 400, wnms.ValidationFailed},
			{"missing parent", "PUT", "/V2/locations", map[string]any{"location": map[string]any{"type": "folderlocation", "name": "x"}}, 400, wnms.ValidationFailed},
			{"unknown parent", "PUT", "/V2/locations", put(id(4242), map[string]any{"type": "folderlocation", "name": "x"}), 400, wnms.ValidationFailed},
			{"bad type", "PUT", "/V2/locations", put(id(0), map[string]any{"type": "roomlocation", "name": "x"}), 400, wnms.ValidationFailed},
			{"no name", "PUT", "/V2/locations", put(id(0), map[string]any{"type": "folderlocation"}), 400, wnms.ValidationFailed},
			{"blank name", "PUT", "/V2/locations", put(id(0), map[string]any{"type": "folderlocation", "name": "  "}), 400, wnms.ValidationFailed},
			{"bad zone", "PUT", "/V2/locations", put(id(0), map[string]any{"type": "folderlocation", "name": "x", "timezoneId": "Nowhere/City"}), 400, wnms.ValidationFailed},
			{"sibling name taken", "PUT", "/V2/locations", put(id(0), map[string]any{"type": "folderlocation", "name": "hq"}), 409, wnms.DuplicateEntity},
			{"name wrong type", "PUT", "/V2/locations", put(id(0), map[string]any{"type": "folderlocation", "name": 5}), 400, wnms.InvalidRequestBody},
			{"modify root", "POST", "/V2/locations", map[string]any{"id": id(0), "name": "x"}, 400, wnms.ValidationFailed},
			{"move under itself", "POST", "/V2/locations", map[string]any{"id": id(hq.ID.ID), "parentId": id(hq.ID.ID)}, 400, wnms.ValidationFailed},
			{"move under a floor", "POST", "/V2/locations", map[string]any{"id": id(hq.ID.ID), "parentId": id(floor.ID.ID)}, 400, wnms.ValidationFailed},
			{"folder to floor", "POST", "/V2/locations", map[string]any{"id": id(hq.ID.ID), "type": "floorlocation"}, 400, wnms.ValidationFailed},
			{"modify unknown id", "POST", "/V2/locations", map[string]any{"id": id(9999), "name": "x"}, 404, wnms.ResourceNotFound},
			{"delete root", "DELETE", "/V2/locations/0", nil, 400, wnms.ValidationFailed},
			{"delete unknown location", "DELETE", "/V2/locations/-1", nil, 400, wnms.ValidationFailed},
			{"delete bad id", "DELETE", "/V2/locations/x", nil, 400, wnms.InvalidParameter},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Admin.Do(tc.method, tc.path, tc.body)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Fatalf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
			})
		}
		if n := len(getTree(t, e.Admin).Locations); n != 4 {
			t.Errorf("rejected calls changed the tree: %d locations, want 4", n)
		}
		if got := getTree(t, e.Admin).byID(hq.ID.ID); got.Name != "HQ" || got.ParentID.ID != 0 {
			t.Errorf("HQ changed: %+v", got)
		}
	})
}

// Locations are per customer: customer 2 neither sees nor touches customer
// 1's locations, and may reuse their names.
func TestLocationCustomerIsolation(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		hq := createLoc(t, e.Admin, 0, "folderlocation", "HQ")
		_, c2 := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		if getTree(t, c2).byID(hq.ID.ID) != nil {
			t.Error("customer 2 sees customer 1's HQ")
		}
		createLoc(t, c2, 0, "folderlocation", "HQ")
		// Another customer's location is answered exactly as an unknown one.
		unknown := c2.Expect(404, "DELETE", "/V2/locations/987654", nil)
		if r := c2.Expect(404, "DELETE", fmt.Sprintf("/V2/locations/%d", hq.ID.ID), nil); r.ErrorCode() != unknown.ErrorCode() ||
			strings.ReplaceAll(string(r.Body), fmt.Sprint(hq.ID.ID), "ID") != strings.ReplaceAll(string(unknown.Body), "987654", "ID") {
			t.Errorf("cross-customer delete: %s, unlike an unknown location's %s", r.Body, unknown.Body)
		}
		c2.Expect(400, "PUT", "/V2/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": hq.ID.ID},
			"location": map[string]any{"type": "floorlocation", "name": "sneaky"}})
	})
}
