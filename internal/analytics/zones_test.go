package analytics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/analytics"
	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

const zonesPath = "/api/v1.14/analytics/graphs/locationtracking/zones/ap/config"

// zonesURL is the zone configuration call for a location, with server_id 1.
func zonesURL(locationID int64, nodeType string) string {
	return fmt.Sprintf("%s?server_id=1&location_id=%d&node_type=%s", zonesPath, locationID, nodeType)
}

// zonesBody is a PUT body for a location with the given config (nil: none).
func zonesBody(locationID int64, config any) map[string]any {
	b := map[string]any{"server_id": 1, "location_id": locationID, "node_type": "location"}
	if config != nil {
		b["config"] = config
	}
	return b
}

// zonesResult is the one element of a zone configuration response.
type zonesResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    struct {
		TotalCount  int `json:"totalCount"`
		FloorConfig struct {
			Config struct {
				ServerID   int64           `json:"server_id"`
				LocationID int64           `json:"location_id"`
				Layout     wnms.ZoneLayout `json:"layout"`
				Range      struct {
					Footfall  wnms.FootfallRange `json:"footfall"`
					DwellTime []int              `json:"dwell_time"`
				} `json:"range"`
			} `json:"config"`
			Options struct {
				Durations           []int          `json:"durations"`
				SubDurations        map[string]any `json:"subDurations"`
				SubDurationSections []string       `json:"subDurationSections"`
			} `json:"options"`
		} `json:"floorConfig"`
		Campaign struct {
			ActiveLandingPage struct {
				PageID int64 `json:"page_id"`
			} `json:"active_landing_page"`
		} `json:"campaign"`
	} `json:"data"`
}

// zonesDecode reads a 200 answer: exactly one element.
func zonesDecode(t *testing.T, r *apitest.Response) zonesResult {
	t.Helper()
	var out []zonesResult
	r.Decode(t, &out)
	if len(out) != 1 || !out[0].Success {
		t.Fatalf("want a one-element array with success true, got %s", r.Body)
	}
	return out[0]
}

// zonesGet reads a location's zone configuration.
func zonesGet(t *testing.T, ac *apitest.Client, locationID int64) zonesResult {
	t.Helper()
	return zonesDecode(t, ac.Expect(http.StatusOK, "GET", zonesURL(locationID, "location"), nil))
}

// zonesConfigJSON is the config part of a location's answer, as JSON, for
// before/after comparisons.
func zonesConfigJSON(t *testing.T, ac *apitest.Client, locationID int64) string {
	t.Helper()
	res := zonesGet(t, ac, locationID)
	b, err := json.Marshal([]any{res.Data.FloorConfig.Config, res.Data.Campaign, res.Data.TotalCount})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// zonesInZone creates a floor under parent with the given time zone.
func zonesInZone(t *testing.T, e *apitest.Env, parent int64, name, tz string) *wnms.Location {
	t.Helper()
	l := e.NewLocation(t, parent, wnms.FloorLocation, name, 1)
	l.TimezoneID = tz
	if err := e.Store.UpdateLocation(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	return l
}

func zonesJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

// The subDurations labels, computed independently of the server, for
// 1 March 2024 (a leap year) and for 29 February 2024.
const (
	zonesLabels1Mar = `{
	"7": ["24/02/2024", "25/02/2024", "26/02/2024", "27/02/2024", "28/02/2024", "29/02/2024", "01/03/2024", "all"],
	"14": [["17/02/2024", "23/02/2024"], ["24/02/2024", "01/03/2024"], "all"],
	"30": [["01/02/2024", "02/02/2024"], ["03/02/2024", "09/02/2024"], ["10/02/2024", "16/02/2024"], ["17/02/2024", "23/02/2024"], ["24/02/2024", "01/03/2024"], "all"],
	"60": [["02/01/2024", "31/01/2024"], ["01/02/2024", "01/03/2024"], "all"],
	"90": [["03/12/2023", "01/01/2024"], ["02/01/2024", "31/01/2024"], ["01/02/2024", "01/03/2024"], "all"],
	"180": [["04/09/2023", "03/10/2023"], ["04/10/2023", "02/11/2023"], ["03/11/2023", "02/12/2023"], ["03/12/2023", "01/01/2024"], ["02/01/2024", "31/01/2024"], ["01/02/2024", "01/03/2024"], "all"],
	"365": ["04/2023", "05/2023", "06/2023", "07/2023", "08/2023", "09/2023", "10/2023", "11/2023", "12/2023", "01/2024", "02/2024", "03/2024", "all"]}`
	zonesLabels29Feb = `{
	"7": ["23/02/2024", "24/02/2024", "25/02/2024", "26/02/2024", "27/02/2024", "28/02/2024", "29/02/2024", "all"],
	"14": [["16/02/2024", "22/02/2024"], ["23/02/2024", "29/02/2024"], "all"],
	"30": [["31/01/2024", "01/02/2024"], ["02/02/2024", "08/02/2024"], ["09/02/2024", "15/02/2024"], ["16/02/2024", "22/02/2024"], ["23/02/2024", "29/02/2024"], "all"],
	"60": [["01/01/2024", "30/01/2024"], ["31/01/2024", "29/02/2024"], "all"],
	"90": [["02/12/2023", "31/12/2023"], ["01/01/2024", "30/01/2024"], ["31/01/2024", "29/02/2024"], "all"],
	"180": [["03/09/2023", "02/10/2023"], ["03/10/2023", "01/11/2023"], ["02/11/2023", "01/12/2023"], ["02/12/2023", "31/12/2023"], ["01/01/2024", "30/01/2024"], ["31/01/2024", "29/02/2024"], "all"],
	"365": ["03/2023", "04/2023", "05/2023", "06/2023", "07/2023", "08/2023", "09/2023", "10/2023", "11/2023", "12/2023", "01/2024", "02/2024", "all"]}`
)

func TestZonesSubDurations(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ac := e.Admin.AnalyticsClient()
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		utc := zonesInZone(t, e, site.ID.ID, "London-ish", "UTC")
		honolulu := zonesInZone(t, e, site.ID.ID, "Honolulu", "Pacific/Honolulu")
		tokyo := zonesInZone(t, e, site.ID.ID, "Tokyo", "Asia/Tokyo")
		blank := zonesInZone(t, e, site.ID.ID, "No zone", "")
		clock := apitest.NewClock(time.Date(2024, 3, 1, 5, 0, 0, 0, time.UTC))
		e.UseClock(clock)

		for _, tc := range []struct {
			name string
			at   time.Time
			loc  *wnms.Location
			want string
		}{
			// 05:00 UTC on 1 March is 19:00 on 29 February in Honolulu.
			{"UTC", clock.Now(), utc, zonesLabels1Mar},
			{"Honolulu a day behind", clock.Now(), honolulu, zonesLabels29Feb},
			{"no zone is UTC", clock.Now(), blank, zonesLabels1Mar},
			// 20:00 UTC on 29 February is 05:00 on 1 March in Tokyo.
			{"Tokyo a day ahead", time.Date(2024, 2, 29, 20, 0, 0, 0, time.UTC), tokyo, zonesLabels1Mar},
			{"UTC the evening before", time.Date(2024, 2, 29, 20, 0, 0, 0, time.UTC), utc, zonesLabels29Feb},
		} {
			t.Run(tc.name, func(t *testing.T) {
				clock.Set(tc.at)
				res := zonesGet(t, ac, tc.loc.ID.ID)
				opts := res.Data.FloorConfig.Options
				if diff := cmp.Diff(zonesJSON(t, tc.want), any(opts.SubDurations)); diff != "" {
					t.Errorf("subDurations (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]int{7, 14, 30, 60, 90, 180, 365}, opts.Durations); diff != "" {
					t.Errorf("durations (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"12am-8am", "8am-12pm", "12pm-4pm", "4pm-8pm", "8pm-12am", "all"}, opts.SubDurationSections); diff != "" {
					t.Errorf("subDurationSections (-want +got):\n%s", diff)
				}
			})
		}

		t.Run("year boundary and key order", func(t *testing.T) {
			// 23:30 UTC on 31 December 2024 is already 2025 in Tokyo.
			clock.Set(time.Date(2024, 12, 31, 23, 30, 0, 0, time.UTC))
			r := ac.Expect(http.StatusOK, "GET", zonesURL(tokyo.ID.ID, "location"), nil)
			res := zonesDecode(t, r)
			want := zonesJSON(t, `{
				"7": ["26/12/2024", "27/12/2024", "28/12/2024", "29/12/2024", "30/12/2024", "31/12/2024", "01/01/2025", "all"],
				"365": ["02/2024", "03/2024", "04/2024", "05/2024", "06/2024", "07/2024", "08/2024", "09/2024", "10/2024", "11/2024", "12/2024", "01/2025", "all"]}`)
			got := map[string]any{"7": res.Data.FloorConfig.Options.SubDurations["7"], "365": res.Data.FloorConfig.Options.SubDurations["365"]}
			if diff := cmp.Diff(want, any(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The keys come in the order of durations.
			body := string(r.Body)
			last := -1
			for _, k := range []string{`"7":`, `"14":`, `"30":`, `"60":`, `"90":`, `"180":`, `"365":`} {
				i := strings.Index(body, k)
				if i < last {
					t.Errorf("subDurations key %s out of order in %s", k, body)
				}
				last = i
			}
		})
	})
}

func TestZonesDefaultsAndRoundTrip(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ac := e.Admin.AnalyticsClient()
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
		e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor 2", 1)
		wing := e.NewLocation(t, site.ID.ID, wnms.FolderLocation, "Wing", 1)
		e.NewLocation(t, wing.ID.ID, wnms.FloorLocation, "Wing floor", 1)
		empty := e.NewLocation(t, 0, wnms.FolderLocation, "Empty", 1)

		t.Run("defaults", func(t *testing.T) {
			res := zonesGet(t, ac, floor.ID.ID)
			cfg := res.Data.FloorConfig.Config
			if cfg.ServerID != 1 || cfg.LocationID != floor.ID.ID {
				t.Errorf("server_id %d location_id %d, want 1 and %d", cfg.ServerID, cfg.LocationID, floor.ID.ID)
			}
			if diff := cmp.Diff(wnms.ZoneLayout{Unit: "FEET"}, cfg.Layout); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wnms.FootfallRange{}, cfg.Range.Footfall); diff != "" {
				t.Errorf("footfall (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int{5, 15, 30, 60, 120}, cfg.Range.DwellTime); diff != "" {
				t.Errorf("dwell_time (-want +got):\n%s", diff)
			}
			if res.Message != "" {
				t.Errorf("message %q, want empty", res.Message)
			}
		})

		t.Run("totalCount counts the floors below", func(t *testing.T) {
			for _, tc := range []struct {
				loc  *wnms.Location
				want int
			}{{floor, 1}, {site, 3}, {wing, 1}, {empty, 0}} {
				if got := zonesGet(t, ac, tc.loc.ID.ID).Data.TotalCount; got != tc.want {
					t.Errorf("location %q: totalCount %d, want %d", tc.loc.Name, got, tc.want)
				}
			}
		})

		t.Run("page_id is stable and per location", func(t *testing.T) {
			seen := map[int64]int64{}
			for _, l := range []*wnms.Location{floor, site, wing, empty} {
				first := zonesGet(t, ac, l.ID.ID).Data.Campaign.ActiveLandingPage.PageID
				again := zonesGet(t, ac, l.ID.ID).Data.Campaign.ActiveLandingPage.PageID
				if first <= 0 || first != again {
					t.Errorf("location %q: page_id %d then %d, want one positive id", l.Name, first, again)
				}
				if other, dup := seen[first]; dup {
					t.Errorf("page_id %d given to locations %d and %d", first, other, l.ID.ID)
				}
				seen[first] = l.ID.ID
			}
			// Concurrent first reads agree on one id.
			fresh := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Fresh", 1)
			ids := make([]int64, 8)
			var wg sync.WaitGroup
			for i := range ids {
				c := e.Admin.AnalyticsClient()
				wg.Go(func() {
					var out []zonesResult
					r := c.Do("GET", zonesURL(fresh.ID.ID, "zone"), nil)
					if r.Status == http.StatusOK && json.Unmarshal(r.Body, &out) == nil && len(out) == 1 {
						ids[i] = out[0].Data.Campaign.ActiveLandingPage.PageID
					}
				})
			}
			wg.Wait()
			for _, id := range ids {
				if id <= 0 || id != ids[0] {
					t.Fatalf("concurrent first reads gave page ids %v", ids)
				}
			}
		})

		pageID := zonesGet(t, ac, floor.ID.ID).Data.Campaign.ActiveLandingPage.PageID
		put := func(t *testing.T, body any) zonesResult {
			t.Helper()
			return zonesDecode(t, ac.Expect(http.StatusOK, "PUT", zonesURL(floor.ID.ID, "location"), body))
		}
		check := func(t *testing.T, res zonesResult, layout wnms.ZoneLayout, footfall wnms.FootfallRange, dwell []int) {
			t.Helper()
			for _, got := range []zonesResult{res, zonesGet(t, ac, floor.ID.ID)} {
				cfg := got.Data.FloorConfig.Config
				if diff := cmp.Diff(layout, cfg.Layout); diff != "" {
					t.Errorf("layout (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(footfall, cfg.Range.Footfall); diff != "" {
					t.Errorf("footfall (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(dwell, cfg.Range.DwellTime); diff != "" {
					t.Errorf("dwell_time (-want +got):\n%s", diff)
				}
				if got.Data.Campaign.ActiveLandingPage.PageID != pageID {
					t.Errorf("page_id %d, want %d", got.Data.Campaign.ActiveLandingPage.PageID, pageID)
				}
				if got.Data.TotalCount != 1 || cfg.LocationID != floor.ID.ID || cfg.ServerID != 1 {
					t.Errorf("totalCount %d location_id %d server_id %d", got.Data.TotalCount, cfg.LocationID, cfg.ServerID)
				}
			}
		}

		t.Run("PUT round trip", func(t *testing.T) {
			res := put(t, zonesBody(floor.ID.ID, map[string]any{
				"layout": map[string]any{"length": 120.25, "width": 80, "unit": "meter"},
				"range":  map[string]any{"footfall": map[string]any{"min": 3, "max": 250}, "dwell_time": []int{1, 10, 45, 1440}},
			}))
			check(t, res, wnms.ZoneLayout{Length: 120.25, Width: 80, Unit: "METER"}, wnms.FootfallRange{Min: 3, Max: 250}, []int{1, 10, 45, 1440})
		})
		t.Run("PUT of one part keeps the others", func(t *testing.T) {
			res := put(t, zonesBody(floor.ID.ID, map[string]any{"range": map[string]any{"dwell_time": []int{2}}}))
			check(t, res, wnms.ZoneLayout{Length: 120.25, Width: 80, Unit: "METER"}, wnms.FootfallRange{Min: 3, Max: 250}, []int{2})
			res = put(t, zonesBody(floor.ID.ID, map[string]any{"layout": map[string]any{"length": 0.5, "width": 1e6, "unit": "Feet"}}))
			check(t, res, wnms.ZoneLayout{Length: 0.5, Width: 1e6, Unit: "FEET"}, wnms.FootfallRange{Min: 3, Max: 250}, []int{2})
		})
		t.Run("PUT without config changes nothing", func(t *testing.T) {
			for _, body := range []any{zonesBody(floor.ID.ID, nil), zonesBody(floor.ID.ID, map[string]any{}),
				map[string]any{"server_id": 1, "location_id": floor.ID.ID, "node_type": "location", "config": nil},
				zonesBody(floor.ID.ID, map[string]any{"range": nil}), zonesBody(floor.ID.ID, map[string]any{"range": map[string]any{}})} {
				res := put(t, body)
				check(t, res, wnms.ZoneLayout{Length: 0.5, Width: 1e6, Unit: "FEET"}, wnms.FootfallRange{Min: 3, Max: 250}, []int{2})
			}
		})
		t.Run("ids as strings, node_type in any case, unknown fields", func(t *testing.T) {
			res := zonesDecode(t, ac.Expect(http.StatusOK, "PUT", zonesURL(floor.ID.ID, "Zone"), map[string]any{
				"server_id": "1", "location_id": fmt.Sprint(floor.ID.ID), "node_type": "ZONE", "extra": []int{1},
				"config": map[string]any{"range": map[string]any{"footfall": map[string]any{"min": 0, "max": 0}}, "options": "ignored"}}))
			check(t, res, wnms.ZoneLayout{Length: 0.5, Width: 1e6, Unit: "FEET"}, wnms.FootfallRange{}, []int{2})
		})
		t.Run("null resets a part to its default", func(t *testing.T) {
			res := put(t, zonesBody(floor.ID.ID, map[string]any{"layout": nil, "range": map[string]any{"dwell_time": nil}}))
			check(t, res, wnms.ZoneLayout{Unit: "FEET"}, wnms.FootfallRange{}, []int{5, 15, 30, 60, 120})
			res = put(t, zonesBody(floor.ID.ID, map[string]any{"range": map[string]any{"footfall": map[string]any{"min": 7, "max": 7}}}))
			check(t, res, wnms.ZoneLayout{Unit: "FEET"}, wnms.FootfallRange{Min: 7, Max: 7}, []int{5, 15, 30, 60, 120})
			res = put(t, zonesBody(floor.ID.ID, map[string]any{"range": map[string]any{"footfall": nil}}))
			check(t, res, wnms.ZoneLayout{Unit: "FEET"}, wnms.FootfallRange{}, []int{5, 15, 30, 60, 120})
		})
		t.Run("any v1.N version", func(t *testing.T) {
			for _, v := range []string{"v1.2", "V1.99"} {
				zonesDecode(t, ac.Expect(http.StatusOK, "GET", strings.Replace(zonesURL(floor.ID.ID, "data"), "v1.14", v, 1), nil))
			}
			r := ac.Expect(http.StatusNotFound, "GET", strings.Replace(zonesURL(floor.ID.ID, "data"), "v1.14", "v1.x", 1), nil)
			if r.ErrorCode() != wnms.ResourceNotFound {
				t.Errorf("errorCode %q, want RESOURCE_NOT_FOUND", r.ErrorCode())
			}
		})
		t.Run("a configured location can be deleted", func(t *testing.T) {
			gone := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Gone", 1)
			put := zonesBody(gone.ID.ID, map[string]any{"layout": map[string]any{"length": 1, "width": 1, "unit": "FEET"}})
			ac.Expect(http.StatusOK, "PUT", zonesURL(gone.ID.ID, "location"), put)
			e.Admin.Expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/V2/locations/%d", gone.ID.ID), nil)
			r := ac.Expect(http.StatusNotFound, "GET", zonesURL(gone.ID.ID, "location"), nil)
			if r.ErrorCode() != wnms.ResourceNotFound {
				t.Errorf("errorCode %q, want RESOURCE_NOT_FOUND", r.ErrorCode())
			}
		})
	})
}

// zonesFootfall records the window it is asked about, to check how the
// zone configuration uses the FootfallSource seam.
type zonesFootfall struct {
	mu       sync.Mutex
	from, to time.Time
	path     string
	customer int64
}

func (z *zonesFootfall) DailyClients(ctx context.Context, customerID int64, path string, from, to time.Time, tz *time.Location) (int64, int64, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.from, z.to, z.path, z.customer = from, to, path, customerID
	return 4, 90, nil
}

func TestZonesSeams(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		floor := zonesInZone(t, e, 0, "Floor", "Asia/Tokyo")
		bare := e.NewLocation(t, 0, wnms.FloorLocation, "Bare floor", 1)
		srv := e.Analytics.Config.Handler.(*analytics.Server)
		ff := &zonesFootfall{}
		// The floor's real layout, set through the main listener.
		e.Admin.Expect(http.StatusNoContent, "POST", fmt.Sprintf("/V5/layouts?locationid=%d", floor.ID.ID),
			map[string]any{"type": "floorlayout", "length": 30, "width": 20, "unit": "METER"})
		srv.Footfall = ff
		e.UseClock(apitest.NewClock(time.Date(2024, 3, 1, 20, 0, 0, 0, time.UTC)))
		ac := e.Admin.AnalyticsClient()

		cfg := zonesGet(t, ac, floor.ID.ID).Data.FloorConfig.Config
		if diff := cmp.Diff(wnms.ZoneLayout{Length: 30, Width: 20, Unit: "METER"}, cfg.Layout); diff != "" {
			t.Errorf("layout from the floor layout (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wnms.FootfallRange{Min: 4, Max: 90}, cfg.Range.Footfall); diff != "" {
			t.Errorf("measured footfall (-want +got):\n%s", diff)
		}
		// The window is the 365 Tokyo days ending with today, 2 March 2024.
		tokyo, _ := time.LoadLocation("Asia/Tokyo")
		ff.mu.Lock()
		if !ff.from.Equal(time.Date(2023, 3, 4, 0, 0, 0, 0, tokyo)) || !ff.to.Equal(time.Date(2024, 3, 3, 0, 0, 0, 0, tokyo)) ||
			ff.path != floor.Path || ff.customer != 1 {
			t.Errorf("footfall asked for [%v, %v) at %q customer %d", ff.from, ff.to, ff.path, ff.customer)
		}
		ff.mu.Unlock()
		if got := zonesGet(t, ac, bare.ID.ID).Data.FloorConfig.Config.Layout; got != (wnms.ZoneLayout{Unit: "FEET"}) {
			t.Errorf("a floor without layout: %+v, want 0 × 0 FEET", got)
		}

		// Parts set by PUT win; null returns to the measured values.
		put := zonesBody(floor.ID.ID, map[string]any{"layout": map[string]any{"length": 5, "width": 6, "unit": "FEET"},
			"range": map[string]any{"footfall": map[string]any{"min": 1, "max": 2}}})
		cfg = zonesDecode(t, ac.Expect(http.StatusOK, "PUT", zonesURL(floor.ID.ID, "location"), put)).Data.FloorConfig.Config
		if cfg.Layout != (wnms.ZoneLayout{Length: 5, Width: 6, Unit: "FEET"}) || cfg.Range.Footfall != (wnms.FootfallRange{Min: 1, Max: 2}) {
			t.Errorf("after PUT: layout %+v footfall %+v", cfg.Layout, cfg.Range.Footfall)
		}
		reset := zonesBody(floor.ID.ID, map[string]any{"layout": nil, "range": map[string]any{"footfall": nil}})
		cfg = zonesDecode(t, ac.Expect(http.StatusOK, "PUT", zonesURL(floor.ID.ID, "location"), reset)).Data.FloorConfig.Config
		if cfg.Layout != (wnms.ZoneLayout{Length: 30, Width: 20, Unit: "METER"}) || cfg.Range.Footfall != (wnms.FootfallRange{Min: 4, Max: 90}) {
			t.Errorf("after reset: layout %+v footfall %+v", cfg.Layout, cfg.Range.Footfall)
		}
	})
}

func TestZonesBadRequests(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		ac := e.Admin.AnalyticsClient()
		floor := e.NewLocation(t, 0, wnms.FloorLocation, "Floor", 1)
		id := floor.ID.ID
		// A stored configuration that every rejected request must leave as is.
		ac.Expect(http.StatusOK, "PUT", zonesURL(id, "location"), zonesBody(id, map[string]any{
			"layout": map[string]any{"length": 10, "width": 20, "unit": "FEET"},
			"range":  map[string]any{"footfall": map[string]any{"min": 1, "max": 9}, "dwell_time": []int{3, 6}}}))
		before := zonesConfigJSON(t, ac, id)

		q := func(s string) string { return zonesPath + "?" + s }
		good := zonesURL(id, "location")
		cfg := func(c map[string]any) map[string]any { return zonesBody(id, c) }
		layout := func(l any) map[string]any { return cfg(map[string]any{"layout": l}) }
		rng := func(r map[string]any) map[string]any { return cfg(map[string]any{"range": r}) }
		dwell := func(d any) map[string]any { return rng(map[string]any{"dwell_time": d}) }
		many := make([]int, 21)
		for i := range many {
			many[i] = i + 1
		}
		big := `{"server_id":1,"location_id":` + fmt.Sprint(id) + `,"node_type":"location","pad":"` + strings.Repeat("x", 1<<20) + `"}`

		for _, tc := range []struct {
			name   string
			method string
			path   string
			body   any
			status int
			code   string
		}{
			// Query parameters, on both methods.
			{"GET no server_id", "GET", q(fmt.Sprintf("location_id=%d&node_type=location", id)), nil, 400, wnms.MissingParameter},
			{"GET empty server_id", "GET", q(fmt.Sprintf("server_id=&location_id=%d&node_type=location", id)), nil, 400, wnms.MissingParameter},
			{"GET no location_id", "GET", q("server_id=1&node_type=location"), nil, 400, wnms.MissingParameter},
			{"GET no node_type", "GET", q(fmt.Sprintf("server_id=1&location_id=%d", id)), nil, 400, wnms.MissingParameter},
			{"GET no query", "GET", zonesPath, nil, 400, wnms.MissingParameter},
			{"GET server_id not a number", "GET", q(fmt.Sprintf("server_id=one&location_id=%d&node_type=location", id)), nil, 400, wnms.InvalidParameter},
			{"GET other server", "GET", q(fmt.Sprintf("server_id=2&location_id=%d&node_type=location", id)), nil, 400, wnms.InvalidParameter},
			{"GET location_id not a number", "GET", q("server_id=1&location_id=1.5&node_type=location"), nil, 400, wnms.InvalidParameter},
			{"GET bad node_type", "GET", q(fmt.Sprintf("server_id=1&location_id=%d&node_type=floor", id)), nil, 400, wnms.InvalidParameter},
			{"GET unknown location", "GET", zonesURL(987654, "location"), nil, 404, wnms.ResourceNotFound},
			{"PUT no server_id", "PUT", q(fmt.Sprintf("location_id=%d&node_type=location", id)), zonesBody(id, nil), 400, wnms.MissingParameter},
			{"PUT no location_id", "PUT", q("server_id=1&node_type=location"), zonesBody(id, nil), 400, wnms.MissingParameter},
			{"PUT no node_type", "PUT", q(fmt.Sprintf("server_id=1&location_id=%d", id)), zonesBody(id, nil), 400, wnms.MissingParameter},
			{"PUT other server", "PUT", q(fmt.Sprintf("server_id=7&location_id=%d&node_type=location", id)), zonesBody(id, nil), 400, wnms.InvalidParameter},
			{"PUT bad node_type", "PUT", q(fmt.Sprintf("server_id=1&location_id=%d&node_type=x", id)), zonesBody(id, nil), 400, wnms.InvalidParameter},
			{"PUT unknown location", "PUT", zonesURL(987654, "location"), zonesBody(987654, nil), 404, wnms.ResourceNotFound},

			// The body.
			{"not JSON", "PUT", good, apitest.Raw{ContentType: "application/json", Body: []byte(`{"server_id":`)}, 400, wnms.InvalidRequestBody},
			{"empty body", "PUT", good, apitest.Raw{ContentType: "application/json", Body: nil}, 400, wnms.InvalidRequestBody},
			{"array body", "PUT", good, []any{zonesBody(id, nil)}, 400, wnms.InvalidRequestBody},
			{"null body", "PUT", good, apitest.Raw{ContentType: "application/json", Body: []byte(`null`)}, 400, wnms.InvalidRequestBody},
			{"two values", "PUT", good, apitest.Raw{ContentType: "application/json", Body: []byte(`{} {}`)}, 400, wnms.InvalidRequestBody},
			{"text/plain", "PUT", good, apitest.Raw{ContentType: "text/plain", Body: []byte(`{}`)}, 415, wnms.UnsupportedMediaType},
			{"form", "PUT", good, apitest.Raw{ContentType: "application/x-www-form-urlencoded", Body: []byte(`a=b`)}, 415, wnms.UnsupportedMediaType},
			{"over 1 MiB", "PUT", good, apitest.Raw{ContentType: "application/json", Body: []byte(big)}, 413, wnms.PayloadTooLarge},
			{"server_id missing", "PUT", good, map[string]any{"location_id": id, "node_type": "location"}, 400, wnms.ValidationFailed},
			{"server_id other", "PUT", good, map[string]any{"server_id": 2, "location_id": id, "node_type": "location"}, 400, wnms.ValidationFailed},
			{"server_id not a number", "PUT", good, map[string]any{"server_id": "one", "location_id": id, "node_type": "location"}, 400, wnms.InvalidRequestBody},
			{"server_id boolean", "PUT", good, map[string]any{"server_id": true, "location_id": id, "node_type": "location"}, 400, wnms.InvalidRequestBody},
			{"server_id fraction", "PUT", good, map[string]any{"server_id": 1.5, "location_id": id, "node_type": "location"}, 400, wnms.InvalidRequestBody},
			{"location_id missing", "PUT", good, map[string]any{"server_id": 1, "node_type": "location"}, 400, wnms.ValidationFailed},
			{"location_id other", "PUT", good, zonesBody(id+1, nil), 400, wnms.ValidationFailed},
			{"node_type missing", "PUT", good, map[string]any{"server_id": 1, "location_id": id}, 400, wnms.ValidationFailed},
			{"node_type other", "PUT", good, map[string]any{"server_id": 1, "location_id": id, "node_type": "zone"}, 400, wnms.ValidationFailed},
			{"node_type unknown", "PUT", good, map[string]any{"server_id": 1, "location_id": id, "node_type": "floor"}, 400, wnms.ValidationFailed},
			{"node_type number", "PUT", good, map[string]any{"server_id": 1, "location_id": id, "node_type": 1}, 400, wnms.InvalidRequestBody},
			{"config not an object", "PUT", good, map[string]any{"server_id": 1, "location_id": id, "node_type": "location", "config": "x"}, 400, wnms.InvalidRequestBody},
			{"range not an object", "PUT", good, cfg(map[string]any{"range": []int{1}}), 400, wnms.InvalidRequestBody},
			{"layout not an object", "PUT", good, layout(5), 400, wnms.InvalidRequestBody},
			{"length 0", "PUT", good, layout(map[string]any{"length": 0, "width": 1, "unit": "FEET"}), 400, wnms.ValidationFailed},
			{"width negative", "PUT", good, layout(map[string]any{"length": 1, "width": -2, "unit": "FEET"}), 400, wnms.ValidationFailed},
			{"length missing", "PUT", good, layout(map[string]any{"width": 1, "unit": "FEET"}), 400, wnms.ValidationFailed},
			{"width missing", "PUT", good, layout(map[string]any{"length": 1, "unit": "FEET"}), 400, wnms.ValidationFailed},
			{"unit missing", "PUT", good, layout(map[string]any{"length": 1, "width": 1}), 400, wnms.ValidationFailed},
			{"unit unknown", "PUT", good, layout(map[string]any{"length": 1, "width": 1, "unit": "YARD"}), 400, wnms.ValidationFailed},
			{"length a string", "PUT", good, layout(map[string]any{"length": "1", "width": 1, "unit": "FEET"}), 400, wnms.InvalidRequestBody},
			{"length infinite", "PUT", good, apitest.Raw{ContentType: "application/json", Body: []byte(fmt.Sprintf(
				`{"server_id":1,"location_id":%d,"node_type":"location","config":{"layout":{"length":1e400,"width":1,"unit":"FEET"}}}`, id))}, 400, wnms.InvalidRequestBody},
			{"footfall min above max", "PUT", good, rng(map[string]any{"footfall": map[string]any{"min": 5, "max": 4}}), 400, wnms.ValidationFailed},
			{"footfall negative", "PUT", good, rng(map[string]any{"footfall": map[string]any{"min": -1, "max": 4}}), 400, wnms.ValidationFailed},
			{"footfall too big", "PUT", good, rng(map[string]any{"footfall": map[string]any{"min": 0, "max": 1_000_000_001}}), 400, wnms.ValidationFailed},
			{"footfall max missing", "PUT", good, rng(map[string]any{"footfall": map[string]any{"min": 1}}), 400, wnms.ValidationFailed},
			{"footfall fraction", "PUT", good, rng(map[string]any{"footfall": map[string]any{"min": 1.5, "max": 4}}), 400, wnms.InvalidRequestBody},
			{"dwell_time empty", "PUT", good, dwell([]int{}), 400, wnms.ValidationFailed},
			{"dwell_time 21 entries", "PUT", good, dwell(many), 400, wnms.ValidationFailed},
			{"dwell_time zero", "PUT", good, dwell([]int{0, 5}), 400, wnms.ValidationFailed},
			{"dwell_time over a day", "PUT", good, dwell([]int{5, 1441}), 400, wnms.ValidationFailed},
			{"dwell_time repeated", "PUT", good, dwell([]int{5, 5}), 400, wnms.ValidationFailed},
			{"dwell_time decreasing", "PUT", good, dwell([]int{10, 5}), 400, wnms.ValidationFailed},
			{"dwell_time huge", "PUT", good, dwell([]int64{5, 1 << 40}), 400, wnms.ValidationFailed},
			{"dwell_time strings", "PUT", good, dwell([]string{"5"}), 400, wnms.InvalidRequestBody},
			{"dwell_time not a list", "PUT", good, dwell(5), 400, wnms.InvalidRequestBody},
			{"valid layout, bad dwell_time", "PUT", good, cfg(map[string]any{
				"layout": map[string]any{"length": 99, "width": 99, "unit": "METER"},
				"range":  map[string]any{"footfall": map[string]any{"min": 0, "max": 1}, "dwell_time": []int{}}}), 400, wnms.ValidationFailed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := ac.Expect(tc.status, tc.method, tc.path, tc.body)
				if got := r.ErrorCode(); got != tc.code {
					t.Errorf("errorCode %q, want %q; body %s", got, tc.code, r.Body)
				}
				var env struct {
					Success *bool  `json:"success"`
					Message string `json:"message"`
				}
				r.Decode(t, &env)
				if env.Success == nil || *env.Success || env.Message == "" {
					t.Errorf("want the analytics envelope with success false and a message, got %s", r.Body)
				}
				if after := zonesConfigJSON(t, ac, id); after != before {
					t.Errorf("a rejected request changed the configuration:\nbefore %s\nafter  %s", before, after)
				}
			})
		}

		t.Run("other methods are 405 with Allow", func(t *testing.T) {
			r := ac.Expect(http.StatusMethodNotAllowed, "POST", good, map[string]any{})
			if got := r.Header.Get("Allow"); got != "GET, PUT" {
				t.Errorf("Allow %q, want \"GET, PUT\"", got)
			}
			if got := r.ErrorCode(); got != wnms.MethodNotAllowed {
				t.Errorf("errorCode %q, want %s; body %s", got, wnms.MethodNotAllowed, r.Body)
			}
		})
	})
}

func TestZonesAccess(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		floor := e.NewLocation(t, site.ID.ID, wnms.FloorLocation, "Floor", 1)
		other := e.NewLocation(t, 0, wnms.FolderLocation, "Other", 1)
		otherFloor := e.NewLocation(t, other.ID.ID, wnms.FloorLocation, "Other floor", 1)
		foreign := e.NewLocation(t, 0, wnms.FolderLocation, "Foreign", 2)
		foreignFloor := e.NewLocation(t, foreign.ID.ID, wnms.FloorLocation, "Foreign floor", 2)
		admin := e.Admin.AnalyticsClient()
		set := func(length float64) map[string]any {
			return zonesBody(floor.ID.ID, map[string]any{"layout": map[string]any{"length": length, "width": 1, "unit": "FEET"}})
		}
		admin.Expect(http.StatusOK, "PUT", zonesURL(floor.ID.ID, "location"), set(1))

		t.Run("roles", func(t *testing.T) {
			for _, role := range []wnms.Role{wnms.Viewer, wnms.Operator, wnms.PowerUser, wnms.Administrator, wnms.SuperUser} {
				t.Run(string(role), func(t *testing.T) {
					_, c := e.NewUser(t, apitest.UserSpec{Role: role, Locations: []int64{site.ID.ID}})
					ac := c.AnalyticsClient()
					before := zonesConfigJSON(t, ac, floor.ID.ID)
					may := role == wnms.Administrator || role == wnms.SuperUser
					r := ac.Do("PUT", zonesURL(floor.ID.ID, "location"), set(42))
					switch {
					case may && r.Status != http.StatusOK:
						t.Fatalf("PUT: status %d, want 200; %s", r.Status, r.Body)
					case may:
						if got := zonesDecode(t, r).Data.FloorConfig.Config.Layout.Length; got != 42 {
							t.Errorf("length %v after PUT, want 42", got)
						}
						admin.Expect(http.StatusOK, "PUT", zonesURL(floor.ID.ID, "location"), set(1))
					case r.Status != http.StatusForbidden || r.ErrorCode() != wnms.AccessDenied:
						t.Fatalf("PUT: status %d %s, want 403 ACCESS_DENIED", r.Status, r.ErrorCode())
					default:
						if after := zonesConfigJSON(t, ac, floor.ID.ID); after != before {
							t.Errorf("a denied PUT changed the configuration: %s → %s", before, after)
						}
					}
					// GET works for every role, on the site and below it.
					zonesGet(t, ac, site.ID.ID)
				})
			}
		})

		t.Run("locations outside the caller's", func(t *testing.T) {
			_, scoped := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Locations: []int64{site.ID.ID}})
			_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
			before := zonesConfigJSON(t, admin, otherFloor.ID.ID)
			for _, tc := range []struct {
				name string
				c    *apitest.Client
				loc  *wnms.Location
			}{
				{"out of scope floor", scoped, otherFloor},
				{"out of scope folder", scoped, other},
				{"root above the scope", scoped, &wnms.Location{ID: wnms.LocalID(0)}},
				{"another customer's floor (as if unknown)", stranger, floor},
				{"another customer's folder (as if unknown)", stranger, site},
			} {
				t.Run(tc.name, func(t *testing.T) {
					ac := tc.c.AnalyticsClient()
					id := tc.loc.ID.ID
					for _, m := range []string{"GET", "PUT"} {
						var body any
						if m == "PUT" {
							body = zonesBody(id, map[string]any{"layout": map[string]any{"length": 9, "width": 9, "unit": "FEET"}})
						}
						want, code := http.StatusForbidden, wnms.LocationAccessDenied
						if tc.c == stranger {
							want, code = http.StatusNotFound, wnms.ResourceNotFound
						}
						r := ac.Expect(want, m, zonesURL(id, "location"), body)
						if r.ErrorCode() != code {
							t.Errorf("%s: errorCode %q, want %s", m, r.ErrorCode(), code)
						}
					}
				})
			}
			if after := zonesConfigJSON(t, admin, otherFloor.ID.ID); after != before {
				t.Errorf("a denied PUT changed the configuration: %s → %s", before, after)
			}
			// The other customer sees its own floor, not ours.
			zonesGet(t, stranger.AnalyticsClient(), foreignFloor.ID.ID)
		})

		t.Run("the shared root is configured per customer", func(t *testing.T) {
			_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Customer: 2})
			sc := stranger.AnalyticsClient()
			admin.Expect(http.StatusOK, "PUT", zonesURL(0, "location"),
				zonesBody(0, map[string]any{"range": map[string]any{"dwell_time": []int{7}}}))
			mine, theirs := zonesGet(t, admin, 0), zonesGet(t, sc, 0)
			if got := theirs.Data.FloorConfig.Config.Range.DwellTime; !cmp.Equal(got, []int{5, 15, 30, 60, 120}) {
				t.Errorf("customer 2 sees root dwell_time %v, want the default", got)
			}
			if mine.Data.Campaign.ActiveLandingPage.PageID == theirs.Data.Campaign.ActiveLandingPage.PageID {
				t.Errorf("both customers got root page_id %d", mine.Data.Campaign.ActiveLandingPage.PageID)
			}
			// Each counts only its own floors: customer 1 has Floor and
			// Other floor, customer 2 Foreign floor.
			if mine.Data.TotalCount != 2 || theirs.Data.TotalCount != 1 {
				t.Errorf("root totalCount %d and %d, want 2 and 1", mine.Data.TotalCount, theirs.Data.TotalCount)
			}
		})

		t.Run("sessions", func(t *testing.T) {
			_, c := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser})
			ac := c.AnalyticsClient()
			zonesGet(t, ac, floor.ID.ID)
			nobody := e.NewClient().AnalyticsClient()
			bogus := e.NewClient().AnalyticsClient()
			bogus.SetSession("not-a-session")
			for _, tc := range []struct {
				name string
				c    *apitest.Client
				code string
			}{{"no session", nobody, wnms.SessionRequired}, {"unknown session", bogus, wnms.SessionExpired}} {
				for _, m := range []string{"GET", "PUT"} {
					var body any
					if m == "PUT" {
						body = set(77)
					}
					r := tc.c.Expect(http.StatusUnauthorized, m, zonesURL(floor.ID.ID, "location"), body)
					if r.ErrorCode() != tc.code {
						t.Errorf("%s %s: errorCode %q, want %q", tc.name, m, r.ErrorCode(), tc.code)
					}
				}
			}
			c.Expect(http.StatusOK, "POST", "/logout", nil)
			r := ac.Expect(http.StatusUnauthorized, "GET", zonesURL(floor.ID.ID, "location"), nil)
			if r.ErrorCode() != wnms.SessionExpired {
				t.Errorf("after logout: errorCode %q, want SESSION_EXPIRED", r.ErrorCode())
			}
			if got := zonesGet(t, admin, floor.ID.ID).Data.FloorConfig.Config.Layout.Length; got != 1 {
				t.Errorf("length %v, want 1: a request without a session changed the configuration", got)
			}
		})

		t.Run("session call", func(t *testing.T) {
			_, c := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Login: "zones-viewer"})
			var s struct {
				Data struct {
					LoginID string    `json:"loginId"`
					Role    wnms.Role `json:"role"`
				} `json:"data"`
			}
			c.AnalyticsClient().Expect(http.StatusOK, "GET", "/api/v1.14/session", nil).Decode(t, &s)
			if s.Data.LoginID != "zones-viewer" || s.Data.Role != wnms.Viewer {
				t.Errorf("session %+v", s.Data)
			}
		})
	})
}
