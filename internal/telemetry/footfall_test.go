package telemetry_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// The zone configuration's footfall range from real events: distinct
// associated clients per local day, exact across a daylight-saving change
// (Berlin, 29 March 2026: a 23-hour day) and at local midnight.
func TestFootfallFromEvents(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		berlin, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Fatal(err)
		}
		at := func(day, hour, min int) int64 { return time.Date(2026, 3, day, hour, min, 0, 0, berlin).UnixMilli() }
		ev := func(mac string, ts int64, typ string) string {
			extra := ""
			if typ == "Failure" {
				extra = `,"failureCode":1,"subFailureCode":101`
			}
			return fmt.Sprintf(`{"macAddress":%q,"bssid":"00:11:74:00:10:0a","channel":36,"timestamp":%d,"eventType":%q%s}`, mac, ts, typ, extra)
		}
		const a, b2, c = "aa:bb:cc:00:00:0a", "aa:bb:cc:00:00:0b", "aa:bb:cc:00:00:0c"
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(
			ev(a, at(28, 23, 30), "Success"), // 28th, just before local midnight
			ev(a, at(28, 10, 0), "Success"),  // the same client again
			ev(b2, at(29, 0, 30), "Success"), // 29th, just after local midnight (23:30 UTC on the 28th)
			ev(c, at(29, 12, 0), "Success"),
			ev(a, at(29, 13, 0), "Failure"), // not an association
			ev(a, at(30, 0, 15), "Success"), // 30th, 22:15 UTC on the 29th
			ev(b2, at(30, 9, 0), "Success"),
			ev(c, at(30, 23, 59), "Success"),
		))
		for _, tc := range []struct {
			from, to int
			lo, hi   int64
		}{
			{28, 32, 0, 3}, // the 31st has none
			{28, 31, 1, 3},
			{29, 30, 2, 2}, // the 23-hour day alone
			{28, 29, 1, 1},
		} {
			lo, hi, err := e.API.Telemetry.DailyClients(t.Context(), 1, wnms.RootPath,
				time.Date(2026, 3, tc.from, 0, 0, 0, 0, berlin), time.Date(2026, 3, tc.to, 0, 0, 0, 0, berlin), berlin)
			if err != nil {
				t.Fatal(err)
			}
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("days %d–%d: %d/%d, want %d/%d", tc.from, tc.to-1, lo, hi, tc.lo, tc.hi)
			}
		}
		// Another customer's clients never count.
		lo, hi, err := e.API.Telemetry.DailyClients(t.Context(), 2, wnms.RootPath,
			time.Date(2026, 3, 28, 0, 0, 0, 0, berlin), time.Date(2026, 3, 31, 0, 0, 0, 0, berlin), berlin)
		if err != nil || lo != 0 || hi != 0 {
			t.Errorf("customer 2: %d/%d %v", lo, hi, err)
		}
	})
}
