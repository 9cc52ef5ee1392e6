package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// An AP radio's samples go in by POST ingest/radiostats and come back,
// radio by radio, in 5-minute buckets; a client sample's SNR comes back
// as the clientsnr trend. Bad records are refused one by one, a retry is
// a duplicate, and a BSSID that is no known AP's radio is refused.
func TestRadioSamples(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		site := e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
		const ap, r24, r5 = "02:00:00:00:AA:00", "02:00:00:00:AA:01", "02:00:00:00:AA:02"
		e.Admin.Expect(200, "POST", "/V5/ingest/aps", json.RawMessage(fmt.Sprintf(
			`[{"macaddress":%q,"name":"ap-1","locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":6},{"macaddress":%q,"channel":36}]}]`,
			ap, site.ID.ID, r24, r5)))
		var aps []struct{ BoxID int64 }
		e.Admin.Expect(200, "GET", "/v2/devices/aps", nil).Decode(t, &aps)
		if len(aps) != 1 {
			t.Fatalf("APs: %+v", aps)
		}
		box := aps[0].BoxID
		bucket := (time.Now().Add(-30*time.Minute).UnixMilli() / 300_000) * 300_000
		at := func(s int) int64 { return bucket + int64(s)*1000 }
		body := fmt.Sprintf(`[
			{"bssid":%[1]q,"timestamp":%[3]d,"channel":6,"utilizationPct":20,"noiseDbm":-95,"clients":3,"txPowerDbm":17},
			{"bssid":%[1]q,"timestamp":%[4]d,"channel":6,"utilizationPct":40,"noiseDbm":-91,"clients":5},
			{"bssid":%[2]q,"timestamp":%[3]d,"channel":36,"frequencyBand":"BAND_5_GHZ","utilizationPct":7.5},
			{"bssid":%[1]q,"timestamp":%[3]d,"channel":6,"utilizationPct":20},
			{"bssid":"02:00:00:00:bb:01","timestamp":%[3]d,"utilizationPct":1},
			{"bssid":%[1]q,"timestamp":%[3]d,"utilizationPct":101},
			{"bssid":%[1]q,"timestamp":%[3]d,"channel":6,"frequencyBand":"BAND_5_GHZ"},
			{"bssid":%[1]q,"timestamp":%[5]d},
			{"bssid":%[1]q,"noiseDbm":-200,"timestamp":%[5]d},
			{"timestamp":%[5]d,"clients":1}
		]`, r24, r5, at(10), at(40), at(50))
		var res struct {
			Accepted, Duplicates int
			Rejected             []struct {
				Index     int
				ErrorCode string
				Message   string
			}
		}
		e.Admin.Expect(200, "POST", "/V5/ingest/radiostats", json.RawMessage(body)).Decode(t, &res)
		if res.Accepted != 3 || res.Duplicates != 1 || len(res.Rejected) != 6 {
			t.Fatalf("ingest: %+v, want 3 stored, 1 duplicate, 6 refused", res)
		}
		for i, r := range res.Rejected {
			if r.Index != 4+i || r.ErrorCode != wnms.ValidationFailed || r.Message == "" {
				t.Errorf("rejection %d: %+v", i, r)
			}
		}
		var stats struct {
			BoxID  int64
			Radios []struct {
				BSSID         string
				FrequencyBand *string
				Samples       []struct {
					Time           int64
					Channel        *int
					UtilizationPct *float64
					NoiseDBm       *float64
					Clients        *int
					TxPowerDBm     *int
				}
			}
		}
		e.Admin.Expect(200, "GET", fmt.Sprintf("/V5/devices/manageddevices/%d/radiostatistics?fromtime=%d", box, bucket-1), nil).Decode(t, &stats)
		if stats.BoxID != box || len(stats.Radios) != 2 {
			t.Fatalf("radio statistics: %+v", stats)
		}
		got := stats.Radios[0]
		if got.BSSID != r24 || *got.FrequencyBand != wnms.Band24GHz || len(got.Samples) != 1 {
			t.Fatalf("2.4 GHz radio: %+v", got)
		}
		s := got.Samples[0]
		if s.Time != bucket || *s.Channel != 6 || *s.UtilizationPct != 30 || *s.NoiseDBm != -93 || *s.Clients != 5 || *s.TxPowerDBm != 17 {
			t.Errorf("2.4 GHz bucket: %+v", s)
		}
		s = stats.Radios[1].Samples[0]
		if stats.Radios[1].BSSID != r5 || *s.UtilizationPct != 7.5 || s.NoiseDBm != nil || s.Clients != nil {
			t.Errorf("5 GHz radio: %+v", stats.Radios[1])
		}
		e.Admin.Expect(404, "GET", "/V5/devices/manageddevices/999999/radiostatistics", nil)
		e.Admin.Expect(400, "GET", fmt.Sprintf("/V5/devices/manageddevices/%d/radiostatistics?fromtime=1&totime=%d", box, time.Now().UnixMilli()), nil)

		// A client sample's SNR.
		const client = "aa:bb:cc:00:00:01"
		e.Admin.Expect(200, "POST", "/V5/ingest/clientstats", json.RawMessage(fmt.Sprintf(
			`[{"macAddress":%q,"bssid":%q,"channel":6,"timestamp":%d,"rssi":-60,"snr":31,"dataRateMbps":72},
			  {"macAddress":%q,"bssid":%q,"channel":6,"timestamp":%d,"rssi":-62,"snr":29,"dataRateMbps":65},
			  {"macAddress":%q,"bssid":%q,"channel":6,"timestamp":%d,"rssi":-62,"snr":101,"dataRateMbps":65}]`,
			client, r24, at(10), client, r24, at(20), client, r24, at(30)))).Decode(t, &res)
		if res.Accepted != 2 || len(res.Rejected) != 1 || res.Rejected[0].Index != 2 {
			t.Fatalf("client samples: %+v", res)
		}
		var trend struct {
			Samples []struct {
				Time  int64
				Value float64
			}
		}
		e.Admin.Expect(200, "GET", "/V5/devices/clients/statistics/trend?type=clientsnr&macaddress="+url.QueryEscape(client)+
			fmt.Sprintf("&fromtime=%d", bucket-1), nil).Decode(t, &trend)
		if len(trend.Samples) != 1 || trend.Samples[0].Time != bucket || trend.Samples[0].Value != 30 {
			t.Errorf("clientsnr: %+v", trend)
		}
	})
}
