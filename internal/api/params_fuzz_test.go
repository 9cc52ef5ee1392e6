package api

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// FuzzExportParams: any window and query string is read or refused with
// INVALID_PARAMETER, and what is read is a window that makes sense.
func FuzzExportParams(f *testing.F) {
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
		r := httptest.NewRequest("GET", "/x", nil)
		r.URL.RawQuery = query
		r.SetPathValue("startdate", start)
		r.SetPathValue("enddate", end)
		var p exportParams
		if err := bindAt(r, &p, func() time.Time { return now }); err != nil {
			if wnms.ErrorCode(err) != wnms.InvalidParameter {
				t.Fatalf("%q %q %q: %v", start, end, query, err)
			}
			return
		}
		if p.From < 0 || p.From >= p.To || p.To > now.Add(wnms.MaxAhead).UnixMilli() || (p.Format != "JSON" && p.Format != "CSV") {
			t.Fatalf("%q %q %q read as %+v", start, end, query, p)
		}
	})
}
