package telemetry_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

func code(err error) string {
	if err == nil {
		return ""
	}
	return wnms.ErrorCode(err)
}

func TestParseMAC(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"00:1a:2b:3c:4d:5e", "00:1A:2B:3C:4D:5E", true},
		{"00-1A-2B-3C-4D-5E", "00:1A:2B:3C:4D:5E", true},
		{" 00:1a:2B-3c:4d:5e ", "00:1A:2B:3C:4D:5E", true},
		{"001a2b3c4d5e", "", false},
		{"00:1a:2b:3c:4d", "", false},
		{"00:1a:2b:3c:4d:5g", "", false},
		{"00:1a:2b:3c:4d:5e:6f", "", false},
		{"00.1a.2b.3c.4d.5e", "", false},
	} {
		got, ok := telemetry.ParseMAC(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseMAC(%q) = %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSplitRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		n    int
		want string
	}{
		{"array", `[{"a":1},{"a":2}]`, 2, ""},
		{"ndjson", "{\"a\":1}\n\n{\"a\":2}\n", 2, ""},
		{"ndjson with a broken line keeps it for its own rejection", "{\"a\":1}\n{\"a\":\n{\"a\":3}", 3, ""},
		{"empty", "  ", 0, wnms.InvalidRequestBody},
		{"a scalar", `42`, 0, wnms.InvalidRequestBody},
		{"broken array", `[{"a":1},`, 0, wnms.InvalidRequestBody},
		{"invalid UTF-8", "[{\"a\":\"\xff\"}]", 0, wnms.InvalidRequestBody},
		{"too many", "[" + strings.Repeat("{},", telemetry.MaxRecords) + "{}]", 0, wnms.PayloadTooLarge},
		{"too many lines", strings.Repeat("{}\n", telemetry.MaxRecords+1), 0, wnms.PayloadTooLarge},
		// Refused at the first element that is not a record, before the rest
		// is looked at (an 8 MiB [1,1,...] once cost ~700 MB to refuse).
		{"an array of numbers", "[1" + strings.Repeat(",1", 1<<20) + "]", 0, wnms.InvalidRequestBody},
		{"an array with a string after objects", `[{"a":1},"x",{"a":2}]`, 0, wnms.InvalidRequestBody},
		{"an array of arrays", `[[{"a":1}]]`, 0, wnms.InvalidRequestBody},
		{"a line that is a number", "{\"a\":1}\n5\n", 0, wnms.InvalidRequestBody},
		{"a record over 64 KiB", `[{"a":"` + strings.Repeat("x", 64<<10) + `"}]`, 0, wnms.InvalidRequestBody},
		{"a line over 64 KiB", `{"a":"` + strings.Repeat("x", 64<<10) + `"}`, 0, wnms.InvalidRequestBody},
		{"text after the array", `[{"a":1}] {"b":2}`, 0, wnms.InvalidRequestBody},
		{"millions of blank lines between two broken halves", "{" + strings.Repeat("\n", 4<<20) + "}", 0, wnms.InvalidRequestBody},
		{"spaces and newlines inside an array", "[ \n {\"a\":1} ,\n\t{\"a\":2} \n]", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := telemetry.SplitRecords([]byte(tc.body))
			if code(err) != tc.want || len(recs) != tc.n {
				t.Errorf("SplitRecords = %d records, %v; want %d, %q", len(recs), err, tc.n, tc.want)
			}
		})
	}
}

func TestParseAP(t *testing.T) {
	good := `{"macaddress":"00-11-74-aa-bb-01","name":"AP 1","ipAddress":"10.0.0.5","deviceCapability":3,
		"locationId":{"type":"locallocationid","id":7},"group":"authorized",
		"radios":[{"macaddress":"00:11:74:aa:bb:10","channel":36,"ssid":"corp","protocol":"ac","numAssocClients":4},
		          {"macaddress":"00:11:74:aa:bb:20","channel":6,"ssid":"corp","numAssocClients":2}],
		"boxId":99,"activeStatus":false,"lastSeen":1}`
	a, err := telemetry.ParseAP(json.RawMessage(good))
	if err != nil {
		t.Fatal(err)
	}
	if a.MacAddress != "00:11:74:AA:BB:01" || a.Group != "AUTHORIZED" || a.NumAssocClients != 6 || a.LocationID.ID != 7 ||
		a.Radios[0].FrequencyBand != wnms.Band5GHz || a.Radios[1].FrequencyBand != wnms.Band24GHz ||
		a.Radios[0].Protocol != "AC" || a.BoxID != 0 || a.LastSeen != 0 {
		t.Errorf("parsed %+v", a)
	}
	if b, _ := telemetry.ParseAP(json.RawMessage(`{"macaddress":"00:11:74:aa:bb:01"}`)); b.Name != "00:11:74:AA:BB:01" ||
		b.LocationID.ID != wnms.UnknownLocation {
		t.Errorf("defaults: %+v", b)
	}
	for _, tc := range []struct {
		name, rec, want, field string
	}{
		{"no mac", `{"name":"x"}`, wnms.ValidationFailed, "macaddress"},
		{"bad mac", `{"macaddress":"nope"}`, wnms.ValidationFailed, "macaddress"},
		{"wrong type", `{"macaddress":"00:11:74:aa:bb:01","type":"client"}`, wnms.ValidationFailed, "type"},
		{"a number as a name", `{"macaddress":"00:11:74:aa:bb:01","name":5}`, wnms.InvalidRequestBody, "name"},
		{"long name", `{"macaddress":"00:11:74:aa:bb:01","name":"` + strings.Repeat("n", 65) + `"}`, wnms.ValidationFailed, "name"},
		{"bad ip", `{"macaddress":"00:11:74:aa:bb:01","ipAddress":"10.0.0"}`, wnms.ValidationFailed, "ipAddress"},
		{"capability", `{"macaddress":"00:11:74:aa:bb:01","deviceCapability":8}`, wnms.ValidationFailed, "deviceCapability"},
		{"remote location", `{"macaddress":"00:11:74:aa:bb:01","locationId":{"type":"remotelocationid","id":1,"childId":2}}`, wnms.ValidationFailed, "locationId"},
		{"unknown group", `{"macaddress":"00:11:74:aa:bb:01","group":"FRIENDS"}`, wnms.InvalidRequestBody, "group"},
		{"radio channel", `{"macaddress":"00:11:74:aa:bb:01","radios":[{"macaddress":"00:11:74:aa:bb:10","channel":0}]}`, wnms.ValidationFailed, "radios[0].channel"},
		{"radio band against channel", `{"macaddress":"00:11:74:aa:bb:01","radios":[{"macaddress":"00:11:74:aa:bb:10","channel":6,"frequencyBand":"BAND_5_GHZ"}]}`, wnms.ValidationFailed, "radios[0].frequencyBand"},
		{"radio twice", `{"macaddress":"00:11:74:aa:bb:01","radios":[{"macaddress":"00:11:74:aa:bb:10","channel":6},{"macaddress":"00-11-74-AA-BB-10","channel":1}]}`, wnms.ValidationFailed, "radios"},
		{"long ssid", `{"macaddress":"00:11:74:aa:bb:01","radios":[{"macaddress":"00:11:74:aa:bb:10","channel":6,"ssid":"` + strings.Repeat("s", 33) + `"}]}`, wnms.ValidationFailed, "radios[0].ssid"},
		{"not an object", `[1]`, wnms.InvalidRequestBody, ""},
		{"broken", `{"macaddress":`, wnms.InvalidRequestBody, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := telemetry.ParseAP(json.RawMessage(tc.rec))
			if code(err) != tc.want {
				t.Fatalf("ParseAP = %v, want %s", err, tc.want)
			}
			if e := err.(*wnms.Error); e.MoreInfo != tc.field {
				t.Errorf("names %q, want %q (%s)", e.MoreInfo, tc.field, e.Message)
			}
		})
	}
}

func TestParseFilters(t *testing.T) {
	sample := `{"value":[{"property":"boxid","value":[1],"operator":"="},{"property":"group","value":["AUTHORIZED"],"operator":"="}],"operator":"OR"}`
	c, ok, err := telemetry.ParseFilters([]string{sample}, "", telemetry.APProperties)
	if err != nil || !ok || c.Op != "OR" || len(c.Sub) != 2 || c.Sub[0].Values[0] != int64(1) || c.Sub[1].Values[0] != "AUTHORIZED" {
		t.Fatalf("the sample client's filter: %+v %v %v", c, ok, err)
	}
	two, _, err := telemetry.ParseFilters([]string{`{"property":"boxid","value":["2"],"operator":">="}`,
		`{"property":"macaddress","value":["00-11-74-aa-bb-01"],"operator":"="}`}, "or", telemetry.APProperties)
	if err != nil || two.Op != "OR" || two.Sub[0].Values[0] != int64(2) || two.Sub[1].Values[0] != "00:11:74:AA:BB:01" {
		t.Errorf("two filters: %+v %v", two, err)
	}
	if _, ok, err := telemetry.ParseFilters(nil, "", telemetry.APProperties); ok || err != nil {
		t.Error("no filter parsed as one")
	}
	for _, tc := range []struct {
		name, filter, op, want string
	}{
		{"not JSON", `{boxid=1}`, "", wnms.InvalidFilter},
		{"unknown property", `{"property":"colour","value":["red"],"operator":"="}`, "", wnms.InvalidFilter},
		{"operator that does not fit", `{"property":"name","value":["x"],"operator":"<"}`, "", wnms.InvalidFilter},
		{"contains on a number", `{"property":"boxid","value":[1],"operator":"contains"}`, "", wnms.InvalidFilter},
		{"unknown operator", `{"property":"boxid","value":[1],"operator":"~"}`, "", wnms.InvalidFilter},
		{"a text for a number", `{"property":"boxid","value":["one"],"operator":"="}`, "", wnms.InvalidFilter},
		{"a fraction for a number", `{"property":"boxid","value":[1.5],"operator":"="}`, "", wnms.InvalidFilter},
		{"a number for a text", `{"property":"name","value":[1],"operator":"="}`, "", wnms.InvalidFilter},
		{"no values", `{"property":"boxid","value":[],"operator":"="}`, "", wnms.InvalidFilter},
		{"no operator", `{"property":"boxid","value":[1]}`, "", wnms.InvalidFilter},
		{"group with a comparison", `{"value":[{"property":"boxid","value":[1],"operator":"="}],"operator":"="}`, "", wnms.InvalidFilter},
		{"unknown field", `{"property":"boxid","value":[1],"operator":"=","extra":1}`, "", wnms.InvalidFilter},
		{"too deep", strings.Repeat(`{"operator":"AND","value":[`, 9) + `{"property":"boxid","value":[1],"operator":"="}` + strings.Repeat(`]}`, 9), "", wnms.InvalidFilter},
		{"bad combining operator", `{"property":"boxid","value":[1],"operator":"="}`, "XOR", wnms.InvalidParameter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := telemetry.ParseFilters([]string{tc.filter}, tc.op, telemetry.APProperties)
			if code(err) != tc.want {
				t.Errorf("ParseFilters = %v, want %s", err, tc.want)
			}
		})
	}
}

// FuzzParseFilters: any filter text is parsed or refused with
// INVALID_FILTER, never a panic or another code.
func FuzzParseFilters(f *testing.F) {
	for _, s := range []string{
		`{"value":[{"property":"boxid","value":[1],"operator":"="},{"property":"troubleshootingstatus","value":[0],"operator":"="}],"operator":"OR"}`,
		`{"property":"name","value":["lobby"],"operator":"contains"}`,
		`{"property":"devicecapability","value":[2],"operator":"bitwise_and"}`,
		`"{\"property\":\"boxid\",\"value\":[1],\"operator\":\"=\"}"`,
		`{"operator":"AND","value":[{"operator":"OR","value":[]}]}`,
		`[]`, `null`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _, err := telemetry.ParseFilters([]string{s}, "", telemetry.APProperties)
		if err != nil && wnms.ErrorCode(err) != wnms.InvalidFilter {
			t.Fatalf("ParseFilters(%q) = %v", s, err)
		}
	})
}

// FuzzIngestRecords: any body is split and each record parsed or refused
// with an error a client can read, never a panic or an internal error.
func FuzzIngestRecords(f *testing.F) {
	for _, s := range []string{
		`[{"macaddress":"00:11:74:aa:bb:01","radios":[{"macaddress":"00:11:74:aa:bb:10","channel":36}]}]`,
		"{\"macaddress\":\"00-11-74-AA-BB-02\",\"name\":\"lobby\"}\n{\"macaddress\":",
		`[{"macaddress":"00:11:74:aa:bb:01","locationId":{"type":"remotelocationid","id":3}}]`,
		`[1,"x",null]`, "\xff", `{"radios":[{}]}`, "{\n\n\n}", `[{"a":1} {"b":2}]`, `[{"a":1}]]`, " [ {} , {} ] ",
		`[{"macAddress":"aa:bb:cc:00:00:01","bssid":"00:11:74:aa:10:01","channel":36,"timestamp":1795365120000,"eventType":"Failure","failureCode":2,"subFailureCode":202}]`,
		`{"macAddress":"aa-bb-cc-00-00-01","bssid":"00:11:74:aa:10:01","channel":6,"timestamp":1,"eventType":"intermediate","categoryCode":1,"typeCode":3,"subTypeCode":65535,"ip":"10.0.0.1"}`,
		// A data source's records at no known AP: no BSSID, channel 0.
		`{"macAddress":"aa:bb:cc:00:00:02","channel":0,"timestamp":1795365120000,"eventType":"Failure","failureCode":2,"subFailureCode":203}`,
		`{"macAddress":"aa:bb:cc:00:00:02","bssid":"","timestamp":1795365120000,"txBytes":10,"rxBytes":0}`,
		// Radio samples, a roam, a client sample with SNR.
		`[{"bssid":"00:11:74:aa:10:01","timestamp":1795365120000,"channel":36,"frequencyBand":"BAND_5_GHZ","utilizationPct":42.5,"noiseDbm":-92,"clients":7,"txPowerDbm":20}]`,
		`{"bssid":"00:11:74:aa:10:01","timestamp":1795365120000,"utilizationPct":1e309}`,
		`{"macAddress":"aa:bb:cc:00:00:03","bssid":"00:11:74:aa:10:02","channel":6,"timestamp":1795365120000,"eventType":"Intermediate","categoryCode":6,"typeCode":40,"subTypeCode":1,"fromBssid":"00:11:74:aa:10:01","roamLatencyMs":80,"fastTransition":true,"rssiBefore":-74,"rssiAfter":-61}`,
		`{"macAddress":"aa:bb:cc:00:00:03","bssid":"00:11:74:aa:10:02","channel":6,"timestamp":1795365120000,"rssi":-61,"snr":30,"dataRateMbps":144.4}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		recs, err := telemetry.SplitRecords([]byte(s))
		if err != nil {
			if c := wnms.ErrorCode(err); c != wnms.InvalidRequestBody && c != wnms.PayloadTooLarge {
				t.Fatalf("SplitRecords(%q) = %v", s, err)
			}
			return
		}
		if len(recs) > telemetry.MaxRecords {
			t.Fatalf("SplitRecords(%q): %d records", s, len(recs))
		}
		for _, r := range recs {
			if len(r) == 0 || r[0] != '{' || len(r) > telemetry.MaxRecordBytes {
				t.Fatalf("SplitRecords(%q) kept %q, which is not a record", s, r)
			}
			if _, err := telemetry.ParseAP(r); err != nil {
				if c := wnms.ErrorCode(err); c != wnms.InvalidRequestBody && c != wnms.ValidationFailed {
					t.Fatalf("ParseAP(%q) = %v", r, err)
				}
			}
			now := time.Unix(1795365120, 0)
			if rs, err := telemetry.ParseRadioSample(r, now); err != nil {
				if c := wnms.ErrorCode(err); c != wnms.InvalidRequestBody && c != wnms.ValidationFailed {
					t.Fatalf("ParseRadioSample(%q) = %v", r, err)
				}
			} else if u := rs.Utilization; u != nil && !(*u >= 0 && *u <= 100) || rs.BSSID == "" {
				t.Fatalf("ParseRadioSample(%q) took %+v", r, rs)
			}
			// A data source's parsers take all the API's do, and more.
			se, serr := telemetry.ParseSourceEvent(r, now)
			if serr != nil {
				if c := wnms.ErrorCode(serr); c != wnms.InvalidRequestBody && c != wnms.ValidationFailed {
					t.Fatalf("ParseSourceEvent(%q) = %v", r, serr)
				}
			} else if se.Channel < 0 || se.Channel > telemetry.MaxChannel {
				t.Fatalf("ParseSourceEvent(%q) took channel %d", r, se.Channel)
			}
			if _, err := telemetry.ParseTrafficSample(r, now); err != nil {
				if c := wnms.ErrorCode(err); c != wnms.InvalidRequestBody && c != wnms.ValidationFailed {
					t.Fatalf("ParseTrafficSample(%q) = %v", r, err)
				}
			}
			e, err := telemetry.ParseEvent(r, now)
			if err != nil {
				if c := wnms.ErrorCode(err); c != wnms.InvalidRequestBody && c != wnms.ValidationFailed {
					t.Fatalf("ParseEvent(%q) = %v", r, err)
				}
				continue
			}
			if serr != nil {
				t.Fatalf("ParseEvent took %q, ParseSourceEvent refused it: %v", r, serr)
			}
			if e.Channel < 1 || e.BSSID == "" {
				t.Fatalf("ParseEvent(%q) took channel %d, BSSID %q", r, e.Channel, e.BSSID)
			}
			if _, err := e.Place(nil); err != nil {
				t.Fatalf("Place(%q) = %v", r, err)
			}
		}
	})
}
