package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/api"
	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// layoutsBenchBody is a layout of n obstacles of every type over the
// built-in materials and one custom material.
func layoutsBenchBody(id int64, n int) map[string]any {
	body := layoutsBody(id)
	types := []string{"RectangularObstacle", "ArchedObstacle", "EllipticalObstacle", "PolygonObstacle"}
	mats := []string{"CONCRETE", "BRICK", "GLASS", "CONCRETE_COLUMN", "WOOD"}
	obstacles := make([]any, n)
	for i := range obstacles {
		x, y := float64(i%100)*1.2, float64(i/100)*15.5
		o := map[string]any{"type": types[i%len(types)], "centerX": x, "centerY": y, "angle": float64(i % 180),
			"thickness": 0.5, "materialId": mats[i%len(mats)],
			"enclosingRectangle": map[string]any{"topLeftx": x - 1, "topLefty": y - 1, "bottomRightx": x + 1, "bottomRighty": y + 1}}
		if i%len(types) == 0 {
			o["breadth"], o["height"] = 2.0, 0.5
		}
		obstacles[i] = o
	}
	body["obstaclesInfo"].(map[string]any)["obstacles"] = obstacles
	return body
}

// BenchmarkLayoutGet measures GET /layouts of a 500-obstacle layout through
// the real handler (session check, location scope, store read, JSON), on
// each backend, and reports the latency percentiles. Target: p99 < 20 ms.
func BenchmarkLayoutGet(b *testing.B) {
	for _, backend := range apitest.Backends(b) {
		b.Run(string(backend), func(b *testing.B) {
			e := apitest.New(b, backend)
			site := e.NewLocation(b, 0, wnms.FolderLocation, "Site", 1)
			floor := e.NewLocation(b, site.ID.ID, wnms.FloorLocation, "Floor", 1)
			// A scoped operator, so the location scope is really checked.
			_, c := e.NewUser(b, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{site.ID.ID}})
			c.Expect(http.StatusNoContent, "POST", layoutsPath("", floor.ID.ID), layoutsBenchBody(floor.ID.ID, 500))
			path := fmt.Sprintf("%s/V5/layouts?locationid=%d", api.BasePath, floor.ID.ID)
			cookie := httpkit.SessionCookie + "=" + c.Session()

			lat := make([]time.Duration, 0, b.N)
			size := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Cookie", cookie)
				rec := httptest.NewRecorder()
				start := time.Now()
				e.API.ServeHTTP(rec, req)
				lat = append(lat, time.Since(start))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				size = rec.Body.Len()
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(size), "body-bytes")
		})
	}
}
