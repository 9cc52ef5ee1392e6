package telemetry_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

func upload(t *testing.T, part string, data []byte) apitest.Raw {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, err := mw.CreateFormFile(part, "logs.tgz")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	mw.Close()
	return apitest.Raw{ContentType: mw.FormDataContentType(), Body: b.Bytes()}
}

// Connection log bundles: uploaded, named by failure events, served to the
// customer's users only.
func TestLogBundles(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		var up struct {
			FileID string `json:"fileId"`
		}
		data := []byte("\x1f\x8b binary log bundle")
		e.Admin.Expect(200, "POST", "/V5/ingest/files", upload(t, "uploadedFile", data)).Decode(t, &up)
		if len(up.FileID) != 52 {
			t.Fatalf("fileId %q", up.FileID)
		}
		ev := func(fileID string) string {
			return fmt.Sprintf(`{"macAddress":"aa:bb:cc:00:00:01","bssid":"00:11:74:00:10:0a","channel":36,"timestamp":%d,
				"eventType":"Failure","failureCode":3,"subFailureCode":303,"fileId":%q}`, time.Now().UnixMilli(), fileID)
		}
		var res ingestResult
		e.Admin.Expect(200, "POST", "/V5/ingest/clientevents", body(ev(up.FileID), ev("NOSUCHBUNDLE"))).Decode(t, &res)
		if res.Accepted != 1 || len(res.Rejected) != 1 || res.Rejected[0].Index != 1 || res.Rejected[0].ErrorCode != wnms.ValidationFailed {
			t.Fatalf("events naming bundles: %+v", res)
		}
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		if r := viewer.Expect(200, "GET", "/new/webservice/sfiles?id="+up.FileID, nil); !bytes.Equal(r.Body, data) ||
			r.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("bundle download: %q %s", r.Body, r.Header.Get("Content-Type"))
		}
		_, stranger := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		stranger.Expect(404, "GET", "/new/webservice/sfiles?id="+up.FileID, nil)
		// Another customer cannot name this customer's bundle either.
		stranger.Expect(200, "POST", "/V5/ingest/clientevents", body(ev(up.FileID))).Decode(t, &res)
		if res.Accepted != 0 {
			t.Errorf("another customer's event named the bundle: %+v", res)
		}
		if r := e.Admin.Do("POST", "/V5/ingest/files", body(`{}`)); r.ErrorCode() != wnms.UnsupportedMediaType {
			t.Errorf("JSON instead of multipart: %s", r.ErrorCode())
		}
		if r := e.Admin.Do("POST", "/V5/ingest/files", upload(t, "other", data)); r.ErrorCode() != wnms.ValidationFailed {
			t.Errorf("no uploadedFile part: %s", r.ErrorCode())
		}
		if r := e.Admin.Do("POST", "/V5/ingest/files", upload(t, "uploadedFile", make([]byte, 16<<20+1))); r.ErrorCode() != wnms.PayloadTooLarge {
			t.Errorf("17 MiB bundle: %s", r.ErrorCode())
		}
	})
}
