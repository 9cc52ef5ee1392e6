package telemetry

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// A sample of traffic only (RADIUS accounting's) is taken by
// ParseTrafficSample, with no radio metrics and no client signal update;
// the ingest API's ParseSample still requires rssi and dataRateMbps.
func TestTrafficSamples(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ts := now.Add(-time.Minute).UnixMilli()
	rec := func(extra string) json.RawMessage {
		return json.RawMessage(`{"macAddress":"02:00:00:00:00:01","bssid":"AA:BB:CC:DD:EE:FF","channel":36,"timestamp":` +
			strconv.FormatInt(ts, 10) + extra + `}`)
	}
	for _, tc := range []struct {
		name    string
		raw     json.RawMessage
		traffic bool
		field   string // "" when accepted
		noRadio bool
	}{
		{"bytes, API", rec(`,"txBytes":1000,"rxBytes":5000`), false, "rssi", false},
		{"bytes, accounting", rec(`,"txBytes":1000,"rxBytes":5000`), true, "", true},
		{"rx only, accounting", rec(`,"rxBytes":5000`), true, "", true},
		{"nothing, accounting", rec(``), true, "txBytes", false},
		{"radio and bytes, accounting", rec(`,"rssi":-60,"dataRateMbps":300,"txBytes":1`), true, "", false},
		{"half the radio, accounting", rec(`,"rssi":-60,"txBytes":1`), true, "dataRateMbps", false},
		{"negative bytes, accounting", rec(`,"txBytes":-1`), true, "txBytes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parse := ParseSample
			if tc.traffic {
				parse = ParseTrafficSample
			}
			s, err := parse(tc.raw, now)
			if tc.field != "" {
				var we *wnms.Error
				if err == nil || !errors.As(err, &we) || we.MoreInfo != tc.field {
					t.Fatalf("err %v, want one on %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.NoRadio != tc.noRadio {
				t.Fatalf("NoRadio %v", s.NoRadio)
			}
			u := s.ClientUpdate()
			if (u.RSSI == nil) != tc.noRadio || (u.DataRate == nil) != tc.noRadio {
				t.Fatalf("client update signal %v %v", u.RSSI, u.DataRate)
			}
		})
	}
}
