package telemetry_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// Retention purges the events, samples and clients older than
// --retention, and /metrics counts what was ingested and purged. SQLite
// deletes rows in batches; PostgreSQL drops the day partitions of events
// and samples whose whole day is older (a row is kept at most a day
// longer) and deletes the other rows.
func TestRetentionAndMetrics(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		// Noon UTC: the old events (two days ago) lie in a day that is
		// wholly past the retention, the old sample (30 hours ago) in the
		// day that straddles it.
		// The clock never runs ahead of the real one: the admin's session
		// was opened at real time, and a clock hours ahead would find it
		// expired (before noon UTC, today's noon would be).
		now := time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
		if now.After(time.Now()) {
			now = now.Add(-24 * time.Hour)
		}
		clock := apitest.NewClock(now)
		e.UseClock(clock)
		e.API.Telemetry.Retention = 24 * time.Hour
		var recs, samples []string
		for i := 0; i < telemetry.PurgeBatch+5; i++ { // more than one batch of old events
			recs = append(recs, fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:%02x:%02x","bssid":"00:11:74:00:00:01","channel":1,"timestamp":%d,"eventType":"Success"}`,
				i/256%256, i%256, now.Add(-48*time.Hour).UnixMilli()+int64(i)))
		}
		recs = append(recs, fmt.Sprintf(`{"macAddress":"aa:bb:cc:ff:00:01","bssid":"00:11:74:00:00:01","channel":1,"timestamp":%d,"eventType":"Success"}`,
			now.Add(-time.Hour).UnixMilli()))
		recs = append(recs, `{"macAddress":"broken"}`)
		samples = append(samples,
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:ff:00:01","bssid":"00:11:74:00:00:01","channel":1,"timestamp":%d,"rssi":-50,"dataRateMbps":54}`, now.Add(-30*time.Hour).UnixMilli()),
			fmt.Sprintf(`{"macAddress":"aa:bb:cc:ff:00:01","bssid":"00:11:74:00:00:01","channel":1,"timestamp":%d,"rssi":-50,"dataRateMbps":54}`, now.Add(-time.Minute).UnixMilli()))
		var res, res2 ingestResult
		half := len(recs) / 2
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(recs[:half]...)).Decode(t, &res)
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(recs[half:]...)).Decode(t, &res2)
		if res.Accepted+res2.Accepted != telemetry.PurgeBatch+6 || len(res.Rejected)+len(res2.Rejected) != 1 {
			t.Fatalf("ingest: %+v %+v", res.Accepted, res2.Accepted)
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", body(samples...))
		// On PostgreSQL the purge skips client rows a write holds (the
		// clients' upkeep may still be at them on a loaded machine) and
		// takes them the next time: purge until nothing is left.
		n := 0
		for range 10 {
			m, err := e.API.Telemetry.Purge(t.Context(), e.Store)
			if err != nil {
				t.Fatal(err)
			}
			if n += m; m == 0 {
				break
			}
		}
		// Old events, one old sample, the clients only they had seen, the
		// baseline marks of the old events' slot (all within 5 ms) and of
		// the old sample's and the slot two later (whose AP test compares
		// its clients with the sample's slot), and those slots' rows of
		// each client (one per old event's client, one of the sample's);
		// on PostgreSQL the events and the slots' client rows went with
		// their day's partitions and the sample stays until its day is
		// past. And the service level counts of the old events' hour (one
		// place), and the radio's of the old sample's hour.
		want, oldSamples := 3*(telemetry.PurgeBatch+5)+1+3+1+1+1, 0
		if b == apitest.Postgres {
			want, oldSamples = telemetry.PurgeBatch+5+3+1+1, 1
		}
		if n != want {
			t.Errorf("purged %d rows, want %d", n, want)
		}
		var stats int
		if err := e.TelemetryDB().QueryRowContext(t.Context(), `SELECT count(*) FROM client_stats`).Scan(&stats); err != nil || stats != 1+oldSamples {
			t.Errorf("%d samples left (%v), want %d", stats, err, 1+oldSamples)
		}
		var p eventPage
		e.Admin.Expect(200, "GET", "/V5/devices/clientevents/aa:bb:cc:00:00:01/0/10", nil).Decode(t, &p)
		if p.TotalCount != 0 {
			t.Errorf("an old event survived")
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clientevents/aa:bb:cc:ff:00:01/0/10", nil).Decode(t, &p)
		if p.TotalCount != 1 {
			t.Errorf("a recent event was purged")
		}
		var cs []wnms.Client
		r := e.Admin.Expect(200, "GET", "/V5/devices/clients", nil)
		r.Decode(t, &cs)
		if r.Header.Get("X-Total-Count") != "1" {
			t.Errorf("clients after the purge: %s", r.Header.Get("X-Total-Count"))
		}
		metrics := string(e.Admin.Expect(200, "GET", "/metrics", nil).Body)
		wants := []string{
			fmt.Sprintf(`wnms_ingest_records_total{kind="clientevents",result="accepted"} %d`, telemetry.PurgeBatch+6),
			`wnms_ingest_records_total{kind="clientevents",result="rejected"} 1`,
			`wnms_ingest_records_total{kind="clientstats",result="accepted"} 2`,
			fmt.Sprintf(`wnms_telemetry_purged_rows_total{table="clients"} %d`, telemetry.PurgeBatch+5),
		}
		if b == apitest.Postgres {
			wants = append(wants, `wnms_telemetry_dropped_partitions_total{table="client_events"} 1`,
				`wnms_telemetry_dropped_partitions_total{table="client_stats"} 1`)
		} else {
			wants = append(wants, fmt.Sprintf(`wnms_telemetry_purged_rows_total{table="client_events"} %d`, telemetry.PurgeBatch+5),
				`wnms_telemetry_purged_rows_total{table="client_stats"} 1`)
		}
		for _, want := range wants {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}

// Retention deletes the incidents whose last slot is older than
// --retention (their anomalies go with the same pass) and keeps the
// others; /metrics counts them.
func TestRetentionPurgesIncidents(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.API.Telemetry.Retention = 24 * time.Hour
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		slot := time.Now().Truncate(15 * time.Minute)
		ids := map[string]int64{}
		for _, tc := range []struct {
			name string
			last time.Time
		}{
			{"old", slot.Add(-25 * time.Hour)},
			{"recent", slot.Add(-23 * time.Hour)},
			{"open", slot.Add(-15 * time.Minute)},
		} {
			in := &wnms.Incident{CustomerID: 1, SiteLocationID: site.ID.ID, From: tc.last.Add(-30 * time.Minute).UnixMilli(),
				LastSlot: tc.last.UnixMilli(), Kind: "clientsconnectivity", Scope: wnms.IncidentScope{Type: "site"}}
			if _, err := e.Store.SaveIncident(t.Context(), in, slot.UnixMilli()); err != nil {
				t.Fatal(err)
			}
			ids[tc.name] = in.ID
		}
		if _, err := e.API.Telemetry.Purge(t.Context(), e.Store); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]int{"old": 404, "recent": 200, "open": 200} {
			e.Admin.Expect(want, "GET", fmt.Sprintf("/V5/incidents/%d", ids[name]), nil)
		}
		metrics := string(e.Admin.Expect(200, "GET", "/metrics", nil).Body)
		if want := `wnms_telemetry_purged_rows_total{table="incidents"} 1`; !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	})
}
