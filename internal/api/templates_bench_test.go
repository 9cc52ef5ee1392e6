package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/api"
	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// profilesBenchSeed stores n profiles of customer 1 spread evenly over
// locs new locations (folders of nine floors each), in one transaction on
// a handle of its own, and returns the location ids.
func profilesBenchSeed(b *testing.B, e *apitest.Env, locs, n int) []int64 {
	b.Helper()
	var ids []int64
	for f := 0; len(ids) < locs; f++ {
		folder := e.NewLocation(b, 0, wnms.FolderLocation, fmt.Sprintf("Building %d", f), 1)
		ids = append(ids, folder.ID.ID)
		for i := 0; i < 9 && len(ids) < locs; i++ {
			ids = append(ids, e.NewLocation(b, folder.ID.ID, wnms.FloorLocation, fmt.Sprintf("Floor %d", i), 1).ID.ID)
		}
	}
	driver, dsn := "sqlite", "file:"+e.Store.Path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	if e.Backend == apitest.Postgres {
		driver, dsn = "pgx", e.Config.DatabaseURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO templates (customer_id, location_id, name, description, ssid,
		frequency_band, security_mode, security_type, passphrase, ping_servers, wan_test_url, ping_test_enabled,
		created_at, updated_at) VALUES (1, $1, $2, 'benchmark', 'Corp', 'ANY', 3, 0, 'correct horse',
		'["8.8.8.8","gw.example.com"]', 'https://example.com/', TRUE, 0, 0)`)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := st.ExecContext(ctx, ids[i%len(ids)], fmt.Sprintf("Profile %05d", i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if e.Backend == apitest.Postgres {
		if _, err := db.ExecContext(ctx, `VACUUM ANALYZE templates`); err != nil {
			b.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `VACUUM ANALYZE locations`); err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// BenchmarkProfilesPage measures the paged list call deep into a large
// list: 10,000 profiles over 200 locations, through the real HTTP server.
// "root" is the page at startIndex 9000 of size 100 of the whole tree (the
// target: p99 under 20 ms on both engines); "folder" is a page of one
// building's subtree (10 locations, 500 profiles), which takes the general
// path of the location filter. One op is one call; p50-ms and p99-ms are
// over every call made (at least 500).
//
//	go test -run=NONE -bench=ProfilesPage -benchtime=1000x ./internal/api/
func BenchmarkProfilesPage(b *testing.B) {
	for _, backend := range apitest.Backends(b) {
		b.Run(string(backend), func(b *testing.B) {
			e := apitest.New(b, backend)
			locs := profilesBenchSeed(b, e, 200, 10000)
			cookie := &http.Cookie{Name: httpkit.SessionCookie, Value: e.Admin.Session()}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			for _, tc := range []struct {
				name, query string
				total, n    int
			}{
				{"root", "/9000/100?locationid=0&fetchSubTreeTemplates=true", 10000, 100},
				{"folder", "/400/100?locationid=" + profilesLoc(locs[0]) + "&fetchSubTreeTemplates=true", 500, 100},
			} {
				b.Run(tc.name, func(b *testing.B) {
					profilesBenchPage(b, client, cookie, e.HTTP.URL+api.BasePath+"/V5/templates/CL_CONN_TEST_PROFILE"+tc.query, tc.total, tc.n)
				})
			}
		})
	}
}

func profilesBenchPage(b *testing.B, client *http.Client, cookie *http.Cookie, url string, total, n int) {
	call := func() ([]byte, time.Duration) {
		req, _ := http.NewRequest("GET", url, nil)
		req.AddCookie(cookie)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d: %s %v", resp.StatusCode, body, err)
		}
		return body, d
	}
	body, _ := call()
	var page struct {
		TemplateList []wnms.Template `json:"templateList"`
		TotalCount   int             `json:"totalCount"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		b.Fatal(err)
	}
	if len(page.TemplateList) != n || page.TotalCount != total {
		b.Fatalf("page of %d, total %d; want %d of %d", len(page.TemplateList), page.TotalCount, n, total)
	}
	for i := 0; i < 50; i++ { // warm the connections and caches
		call()
	}
	lat := make([]time.Duration, 0, 1024)
	for b.Loop() {
		_, d := call()
		lat = append(lat, d)
	}
	b.StopTimer()
	for len(lat) < 500 {
		_, d := call()
		lat = append(lat, d)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat)), "calls")
}
