package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/telemetry"
	"github.com/wnms/wnms/internal/wnms"
)

// TestAuthzTelemetry is the authorization matrix of the telemetry calls.
func TestAuthzTelemetry(t *testing.T) {
	apAt := func(loc int64) string {
		return fmt.Sprintf(`{"macaddress":"00:11:74:%02x:%02x:%02x","locationId":{"type":"locallocationid","id":%d}}`,
			auth.RandomToken(1)[0], auth.RandomToken(1)[0], auth.RandomToken(1)[0], loc)
	}
	// markAP stores an AP of customer 1 at the site folder, as the store,
	// and returns how the lists show it.
	markAP := func(t *testing.T, f *authzFixture) string {
		a, err := telemetry.ParseAP(json.RawMessage(apAt(f.Site.ID.ID)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.E.Store.UpsertAPs(context.Background(), 1, []*wnms.AP{a}, time.Now().UnixMilli()); err != nil {
			t.Fatal(err)
		}
		return `"macaddress":"` + a.MacAddress + `"`
	}
	list := func(path string) func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
		return func(_ *testing.T, _ *authzFixture, tg authzTarget) (string, string, any) {
			return "GET", strings.ReplaceAll(path, "{floor}", fmt.Sprint(tg.Floor.ID.ID)), nil
		}
	}
	// markEvent reports, as the admin, an 802.11ac AP at the site folder
	// and a Success event of the client seen there, and returns how the
	// client event lists show it.
	const client = "aa:bb:cc:dd:ee:01"
	markEvent := func(t *testing.T, f *authzFixture) string {
		id := "mark-" + auth.RandomToken(6)
		bssid := fmt.Sprintf("00:11:74:%02x:%02x:%02x", id[5], id[6], id[7])
		f.E.Admin.Expect(200, "POST", "/V5/ingest/aps", json.RawMessage(fmt.Sprintf(
			`[{"macaddress":%q,"deviceCapability":2,"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":36}]}]`,
			bssid, f.Site.ID.ID, bssid)))
		f.E.Admin.Expect(200, "POST", "/V5/ingest/clientevents", json.RawMessage(fmt.Sprintf(
			`[{"eventId":%q,"macAddress":%q,"bssid":%q,"channel":36,"timestamp":%d,"eventType":"Success"}]`,
			id, client, bssid, time.Now().Add(-time.Minute).UnixMilli())))
		return `"eventId":"` + id + `"`
	}
	// markClient reports a Success event of a new client at the site
	// folder and returns the client's boxId and MAC.
	markClient := func(t *testing.T, f *authzFixture) (int64, string) {
		id := auth.RandomToken(6)
		mac := fmt.Sprintf("aa:bb:cc:%02x:%02x:%02x", id[0], id[1], id[2])
		bssid := fmt.Sprintf("00:11:74:%02x:%02x:%02x", id[3], id[4], id[5])
		f.E.Admin.Expect(200, "POST", "/V5/ingest/aps", json.RawMessage(fmt.Sprintf(
			`[{"macaddress":%q,"locationId":{"type":"locallocationid","id":%d},"radios":[{"macaddress":%q,"channel":36}]}]`,
			bssid, f.Site.ID.ID, bssid)))
		f.E.Admin.Expect(200, "POST", "/V5/ingest/clientevents", json.RawMessage(fmt.Sprintf(
			`[{"macAddress":%q,"bssid":%q,"channel":36,"timestamp":%d,"eventType":"Success"}]`, mac, bssid, time.Now().UnixMilli())))
		var cs []struct{ BoxID int64 }
		f.E.Admin.Expect(200, "GET", "/V5/devices/clients?filter="+url.QueryEscape(
			fmt.Sprintf(`{"property":"macaddress","value":[%q],"operator":"="}`, mac)), nil).Decode(t, &cs)
		if len(cs) != 1 {
			t.Fatalf("client %s not listed", mac)
		}
		return cs[0].BoxID, strings.ToUpper(mac)
	}
	cases := []authzCase{
		{name: "POST ingest/aps", allowed: opUp, ok: 200,
			request: func(_ *testing.T, _ *authzFixture, tg authzTarget) (string, string, any) {
				return "POST", "/V5/ingest/aps", json.RawMessage("[" + apAt(tg.Floor.ID.ID) + "]")
			}},
		{name: "GET devices/aps at a floor", request: list("/v2/devices/aps?locationid={floor}"), allowed: opUp, ok: 200,
			location: true, foreign: 400, foreignCode: wnms.InvalidParameter},
		{name: "GET devices/aps", request: list("/v2/devices/aps"), allowed: opUp, ok: 200, marker: markAP, scoped: true},
		{name: "GET manageddevices at a floor", request: list("/V5/devices/manageddevices?locationid={floor}"), allowed: opUp, ok: 200,
			location: true, foreign: 400, foreignCode: wnms.InvalidParameter},
		{name: "GET manageddevices", request: list("/V5/devices/manageddevices"), allowed: opUp, ok: 200, marker: markAP, scoped: true},
		{name: "GET apstatus at a floor", request: list("/V5/devices/apstatus?locationid={floor}"), allowed: allRoles, ok: 200,
			location: true, foreign: 400, foreignCode: wnms.InvalidParameter},
		{name: "GET apstatus", request: list("/V5/devices/apstatus"), allowed: allRoles, ok: 200, marker: markAP, scoped: true},
		{name: "POST ingest/clientevents", allowed: opUp, ok: 200,
			request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
				return "POST", "/V5/ingest/clientevents", json.RawMessage(fmt.Sprintf(
					`[{"macAddress":%q,"bssid":"00:11:74:00:00:99","channel":1,"timestamp":%d,"eventType":"Success"}]`, client, time.Now().UnixMilli()))
			}},
		{name: "POST ingest/files", allowed: opUp, ok: 200,
			request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
				var b bytes.Buffer
				mw := multipart.NewWriter(&b)
				w, _ := mw.CreateFormFile("uploadedFile", "logs.bin")
				w.Write([]byte("logs"))
				mw.Close()
				return "POST", "/V5/ingest/files", apitest.Raw{ContentType: mw.FormDataContentType(), Body: b.Bytes()}
			}},
		{name: "GET clientevents/metadata", request: list("/V5/devices/clientevents/metadata"), allowed: allRoles, ok: 200},
		{name: "GET clientevents at a floor", request: list("/V5/devices/clientevents/" + client + "/0/10?locationid={floor}"),
			allowed: allRoles, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter},
		{name: "GET clientevents", request: list("/V5/devices/clientevents/" + client + "/0/10"), allowed: allRoles, ok: 200,
			marker: markEvent, scoped: true},
		{name: "GET connectionlogs", request: list("/V5/devices/clients/connectionlogs?clientmacaddress=" + client),
			allowed: allRoles, ok: 200, marker: markEvent, scoped: true},
		{name: "POST ingest/clientstats", allowed: opUp, ok: 200,
			request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
				return "POST", "/V5/ingest/clientstats", json.RawMessage(fmt.Sprintf(
					`[{"macAddress":%q,"bssid":"00:11:74:00:00:99","channel":1,"timestamp":%d,"rssi":-50,"dataRateMbps":54}]`, client, time.Now().UnixMilli()))
			}},
		{name: "POST ingest/radiostats", allowed: opUp, ok: 200,
			request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
				return "POST", "/V5/ingest/radiostats", json.RawMessage(fmt.Sprintf(
					`[{"bssid":"00:11:74:00:00:99","channel":1,"timestamp":%d,"utilizationPct":12.5}]`, time.Now().UnixMilli()))
			}},
		{name: "GET clients at a floor", request: list("/V5/devices/clients?locationid={floor}"), allowed: allRoles, ok: 200,
			location: true, foreign: 400, foreignCode: wnms.InvalidParameter},
		{name: "GET clients", request: list("/V5/devices/clients"), allowed: allRoles, ok: 200, scoped: true,
			marker: func(t *testing.T, f *authzFixture) string {
				_, mac := markClient(t, f)
				return `"macAddress":"` + mac + `"`
			}},
		{name: "GET clients paged", request: list("/V5/devices/clients/0/100"), allowed: allRoles, ok: 200, scoped: true,
			marker: func(t *testing.T, f *authzFixture) string {
				_, mac := markClient(t, f)
				return `"macAddress":"` + mac + `"`
			}},
		{name: "GET associationdata at a floor", request: list(fmt.Sprintf("/V2/analytics/associationdata/%d/%d?locationid={floor}",
			time.Now().Add(-time.Hour).UnixMilli(), time.Now().UnixMilli())),
			allowed: allRoles, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter},
		{name: "GET clients/statistics/trend", allowed: allRoles, ok: 200, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, _ authzTarget) (string, string, any) {
				box, _ := markClient(t, f)
				return "GET", fmt.Sprintf("/V5/devices/clients/statistics/trend?type=clientdatarate&boxid=%d", box), nil
			}},
		{name: "GET manageddevices/statistics/trend", allowed: allRoles, ok: 200, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, _ authzTarget) (string, string, any) {
				markAP(t, f)
				var aps []struct{ BoxID int64 }
				f.E.Admin.Expect(200, "GET", "/v2/devices/aps?sortcolumn=boxid&sortascending=false", nil).Decode(t, &aps)
				return "GET", fmt.Sprintf("/V5/devices/manageddevices/statistics/trend?type=apclientcount&boxid=%d", aps[0].BoxID), nil
			}},
		{name: "GET manageddevices/{boxId}/radiostatistics", allowed: allRoles, ok: 200, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, _ authzTarget) (string, string, any) {
				markAP(t, f)
				var aps []struct{ BoxID int64 }
				f.E.Admin.Expect(200, "GET", "/v2/devices/aps?sortcolumn=boxid&sortascending=false", nil).Decode(t, &aps)
				return "GET", fmt.Sprintf("/V5/devices/manageddevices/%d/radiostatistics", aps[0].BoxID), nil
			}},
		{name: "PUT manageddevices/{boxId}/position", allowed: opUp, ok: 200, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, _ authzTarget) (string, string, any) {
				markAP(t, f)
				var aps []struct{ BoxID int64 }
				f.E.Admin.Expect(200, "GET", "/v2/devices/aps?sortcolumn=boxid&sortascending=false", nil).Decode(t, &aps)
				return "PUT", fmt.Sprintf("/V5/devices/manageddevices/%d/position", aps[0].BoxID), json.RawMessage(`{"position":{"x":3,"y":4}}`)
			}},
		{name: "GET observingmanageddevices", allowed: allRoles, ok: 200, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, _ authzTarget) (string, string, any) {
				box, _ := markClient(t, f)
				return "GET", fmt.Sprintf("/V5/devices/clients/%d/observingmanageddevices", box), nil
			}},
	}
	runAuthz(t, cases)
}
