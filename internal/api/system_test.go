package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/api"
	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/app"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/tz"
	"github.com/wnms/wnms/internal/wnms"
)

func TestSystemCalls(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		anon := e.NewClient()
		var v struct{ Version, Build string }
		anon.Expect(200, "GET", "/V5/system/version?locationid=0", nil).Decode(t, &v)
		if v.Version != "test" || v.Build != "test" {
			t.Errorf("version: %+v", v)
		}
		anon.Expect(400, "GET", "/V5/system/version?locationid=abc", nil)
		if r := anon.Expect(200, "GET", "/V5/system/apiversion", nil); string(r.Body) != `"V5"` {
			t.Errorf("apiversion: %s", r.Body)
		}
		var zones []tz.Entry
		anon.Expect(200, "GET", "/V5/system/timezoneids", nil).Decode(t, &zones)
		if len(zones) < 300 {
			t.Fatalf("only %d zones", len(zones))
		}
		seen := map[string]bool{}
		for _, z := range zones {
			if _, err := time.LoadLocation(z.ID); err != nil {
				t.Errorf("zone %s does not load: %v", z.ID, err)
			}
			if !strings.HasPrefix(z.DisplayString, "(UTC") || !strings.HasSuffix(z.DisplayString, ") "+z.ID) {
				t.Errorf("display string %q", z.DisplayString)
			}
			seen[z.ID] = true
		}
		for _, id := range []string{"UTC", "Asia/Kolkata", "America/New_York", "Europe/Berlin"} {
			if !seen[id] {
				t.Errorf("zone %s missing", id)
			}
		}
		for _, z := range zones {
			if z.ID == "Asia/Kolkata" && z.DisplayString != "(UTC+05:30) Asia/Kolkata" {
				t.Errorf("Kolkata: %q", z.DisplayString)
			}
		}

		anon.Expect(401, "GET", "/V5/system/timestamp", nil)
		var ts int64
		before := time.Now().UnixMilli()
		e.Admin.Expect(200, "GET", "/V5/system/timestamp", nil).Decode(t, &ts)
		if ts < before-1000 || ts > time.Now().UnixMilli()+1000 {
			t.Errorf("timestamp %d is not now in ms", ts)
		}

		// System info lists the backups in the data directory.
		dir := filepath.Join(e.Config.DataDir, "backups")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		files := 2 // the store and its telemetry file
		if _, err := e.Store.Backup(context.Background(), filepath.Join(dir, "wnms-1.db")); err != nil && b == apitest.SQLite {
			t.Fatal(err)
		} else if b == apitest.Postgres {
			os.WriteFile(filepath.Join(dir, "wnms-1.db"), []byte("pg"), 0o600)
			files = 1
		}
		var info api.SystemInfo
		e.Admin.Expect(200, "GET", "/V7/system/info", nil).Decode(t, &info)
		if len(info.BackupFiles) == 2 && info.BackupFiles[1].BackupFileName == "wnms-1.db" {
			info.BackupFiles[0], info.BackupFiles[1] = info.BackupFiles[1], info.BackupFiles[0]
		}
		if info.ServerID != 1 || info.Version != "test" || len(info.BackupFiles) != files ||
			info.BackupFiles[0].BackupFileName != "wnms-1.db" || info.BackupFiles[0].FileSizeInBytes == 0 ||
			info.BackupFiles[0].DBBackupType != "FULL" || info.SerialNumber == "" || info.OS == "" {
			t.Errorf("info: %+v", info)
		}
		var again api.SystemInfo
		e.Admin.Expect(200, "GET", "/V7/system/info", nil).Decode(t, &again)
		if again.SerialNumber != info.SerialNumber {
			t.Error("serial number changes between calls")
		}
		_, op := e.NewUser(t, apitest.UserSpec{Role: wnms.Operator})
		op.Expect(403, "GET", "/V7/system/info", nil)
	})
}

func TestRoutingAndErrors(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	c := e.Admin
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
		allow        string
	}{
		{"GET", "/V5/users/current", 200, "", ""},
		{"GET", "/v5/users/current", 200, "", ""},
		{"GET", "/V1/users/current", 200, "", ""},
		{"GET", "/V7/users/current", 200, "", ""},
		{"GET", "/V8/users/current", 404, wnms.ResourceNotFound, ""},
		{"GET", "/users/current", 404, wnms.ResourceNotFound, ""},
		{"GET", "/V5/nothing/here", 404, wnms.ResourceNotFound, ""},
		{"GET", "/new/nothing", 404, wnms.ResourceNotFound, ""},
		{"PATCH", "/V5/users/current", 405, wnms.MethodNotAllowed, "GET, DELETE"},
		{"GET", "/V5/users/ownpassword", 405, wnms.MethodNotAllowed, "POST, DELETE"},
		{"GET", "/V5/system/info", 200, "", ""},
		{"PUT", "/V5/system/timestamp", 405, wnms.MethodNotAllowed, "GET"},
		{"PUT", "/V5/login/keepsessionalive", 405, wnms.MethodNotAllowed, "GET, POST"},
		{"POST", "/healthz", 405, wnms.MethodNotAllowed, "GET"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := c.Do(tc.method, tc.path, nil)
			if r.Status != tc.status || r.ErrorCode() != tc.code {
				t.Fatalf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
			}
			if r.Header.Get("Allow") != tc.allow {
				t.Errorf("Allow %q, want %q", r.Header.Get("Allow"), tc.allow)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	c.Expect(200, "GET", "/healthz", nil)
	c.Expect(200, "GET", "/readyz", nil)
	c.Do("POST", "/login/key/c/600", keyBody("nope", "nope"))
	c.AnalyticsClient().Expect(200, "GET", "/api/v1.14/session", nil)
	r := c.Expect(200, "GET", "/metrics", nil)
	for _, want := range []string{`wnms_http_requests_total{listener="api",route="GET /users/current",status="200"}`,
		`wnms_http_requests_total{listener="analytics",route="GET /session",status="200"}`,
		`wnms_http_request_duration_seconds_bucket{listener="analytics",route="GET /session",le="0.005"}`,
		"wnms_http_request_duration_seconds_bucket", "wnms_login_failures_total 1"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if r := c.Expect(200, "GET", "/openapi.json", nil); !strings.Contains(string(r.Body), `"openapi": "3.1.0"`) {
		t.Error("openapi.json does not declare 3.1.0")
	}
}

// panicStore makes one store call panic, to prove a panicking handler
// answers 500 with a request id and leaks nothing.
type panicStore struct{ app.Store }

func (panicStore) Users(context.Context, int64) ([]wnms.User, error) { panic("boom: secret detail") }

func TestPanicIsInternalError(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	var logs apitest.SyncBuffer
	reg := metrics.NewRegistry()
	srv := api.New(app.New(panicStore{e.Store}, e.Auth, slog.New(slog.NewJSONHandler(&logs, nil)), reg), api.Info{}, httpkit.NewMetrics(reg))
	hs := httptest.NewServer(srv)
	defer hs.Close()
	req, _ := http.NewRequest("GET", hs.URL+"/new/webservice/V5/users", nil)
	req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: e.Admin.Session()})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 500 || !strings.Contains(string(body), "INTERNAL_ERROR") || strings.Contains(string(body), "boom") {
		t.Fatalf("panic answer %d %s", resp.StatusCode, body)
	}
	v, _ := apitest.OpenAPI()
	if err := v.CheckResponse("GET", "/new/webservice/V5/users", 500, resp.Header, body); err != nil {
		t.Error(err)
	}
	if !strings.Contains(logs.String(), id) || !strings.Contains(logs.String(), "boom") {
		t.Errorf("the log lacks the request id or the panic: %s", logs.String())
	}
}

// Readiness proves the store can commit a write: a store that answers reads
// but cannot write (a full disk, a read-only file system, another program
// holding the database) is not ready, and readiness comes back with the
// writes.
func TestReadyzNeedsWritableStore(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	e.Store.WriteProbeEvery = 0
	c := e.NewClient()
	c.Expect(200, "GET", "/readyz", nil)
	// Another program takes the database's write lock and keeps it: the
	// probe's write waits for it until /readyz's own bound (2 s) ends,
	// while reads still answer (WAL).
	ctx := context.Background()
	other, err := e.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	r := c.Expect(503, "GET", "/readyz", nil)
	if !strings.Contains(string(r.Body), "cannot write") {
		t.Errorf("readyz body %s does not say why", r.Body)
	}
	if _, err := other.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	c.Expect(200, "GET", "/readyz", nil)
}
