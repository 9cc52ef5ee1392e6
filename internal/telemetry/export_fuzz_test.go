package telemetry

import (
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// FuzzExportQuery: any window and query string is read or refused with
// INVALID_PARAMETER, and what is read is a window that makes sense.
func FuzzExportQuery(f *testing.F) {
	for _, s := range [][3]string{
		{"1700000000000", "1700003600000", `format="JSON"&tohashmac="true"`},
		{"0", "1", "format=csv"},
		{"5", "5", ""},
		{"-1", "9", "false"},
		{"1", "9223372036854775807", `format=%22CSV%22&tohashmac=0`},
		{"x", "1", "format=XML"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	now := time.UnixMilli(1700000000000)
	f.Fuzz(func(t *testing.T, start, end, query string) {
		r := httptest.NewRequest("GET", "/x?"+url.PathEscape(query), nil)
		r.URL.RawQuery = query
		r.SetPathValue("startdate", start)
		r.SetPathValue("enddate", end)
		q, err := parseExportQuery(r, now)
		if err != nil {
			if wnms.ErrorCode(err) != wnms.InvalidParameter {
				t.Fatalf("%q %q %q: %v", start, end, query, err)
			}
			return
		}
		if q.from < 0 || q.from >= q.to || q.to > now.Add(wnms.MaxAhead).UnixMilli() || (q.format != "JSON" && q.format != "CSV") {
			t.Fatalf("%q %q %q read as %+v", start, end, query, q)
		}
	})
}
