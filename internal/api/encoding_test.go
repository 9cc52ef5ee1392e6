package api_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// A JSON body may come with Content-Encoding: gzip; its decompressed size
// counts against the limit (a gzip bomb is 413 without being inflated past
// it), and any other encoding is 415. Before, the encoding was ignored and
// a gzip body was refused as "not valid UTF-8".
func TestContentEncoding(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	ap := []byte(`[{"macaddress":"00:11:74:00:0e:01","name":"Gzip AP","radios":[{"macaddress":"00:11:74:00:0e:10","channel":36}]}]`)
	bomb := gzipped(t, []byte("["+strings.Repeat(" ", 17<<20)+"]"))
	for _, c := range []struct {
		name, encoding string
		body           []byte
		want           int
		code           string
	}{
		{"gzip", "gzip", gzipped(t, ap), 200, ""},
		{"gzip, any case", "GZIP", gzipped(t, ap), 200, ""},
		{"identity", "identity", ap, 200, ""},
		{"a bomb past 16 MiB", "gzip", bomb, 413, wnms.PayloadTooLarge},
		{"not gzip at all", "gzip", ap, 400, wnms.InvalidRequestBody},
		{"truncated gzip", "gzip", gzipped(t, ap)[:20], 400, wnms.InvalidRequestBody},
		{"brotli", "br", ap, 415, wnms.UnsupportedMediaType},
		{"deflate", "deflate", ap, 415, wnms.UnsupportedMediaType},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := e.Admin.WithT(t)
			cl.Header = cl.Header.Clone()
			cl.Header.Set("Content-Encoding", c.encoding)
			r := cl.Do("POST", "/V5/ingest/aps", apitest.Raw{ContentType: "application/json", Body: c.body})
			if r.Status != c.want || r.ErrorCode() != c.code {
				t.Errorf("%d %s, want %d %s", r.Status, r.Body, c.want, c.code)
			}
		})
	}
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	// Every JSON call reads its body the same way: a gzip location body.
	cl := e.Admin.WithT(t)
	cl.Header = cl.Header.Clone()
	cl.Header.Set("Content-Encoding", "gzip")
	body := fmt.Sprintf(`{"parentLocation":{"type":"locallocationid","id":0},"location":{"type":"folderlocation","name":%q}}`, "Gzipped Site")
	cl.Expect(200, "PUT", "/V2/locations", apitest.Raw{ContentType: "application/json", Body: gzipped(t, []byte(body))})
}
