package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// layoutsFuzzClientError checks that err is an *wnms.Error of one of the
// codes with a 4xx status.
func layoutsFuzzClientError(t *testing.T, err error, codes ...string) {
	t.Helper()
	var e *wnms.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not a *wnms.Error", err, err)
	}
	if httpkit.Status(e.Code) < 400 || httpkit.Status(e.Code) > 499 {
		t.Fatalf("error %v has status %d", e, httpkit.Status(e.Code))
	}
	for _, c := range codes {
		if e.Code == c {
			return
		}
	}
	t.Fatalf("error %v: code %s, want one of %v", e, e.Code, codes)
}

const layoutsFuzzFloor = 7

// FuzzLayoutDecode feeds arbitrary bodies to the POST /layouts decoder and
// validator. A refusal is INVALID_REQUEST_BODY or VALIDATION_FAILED; an
// accepted layout keeps every rule, and encoding it and decoding it again
// gives the same layout (what GET answers, POST accepts unchanged).
func FuzzLayoutDecode(f *testing.F) {
	for _, s := range []string{
		`{"length": 10, "width": 20, "unit": "FEET"}`,
		`{"type":"floorlayout","location":{"id":{"type":"locallocationid","id":7}},"length":120,"width":80,"unit":"meter","calibrated":true,
		  "obstaclesInfo":{"materialProperties":{"WOOD":{"id":"WOOD","name":"Wood","groupId":"others",
		    "attenuationCoefficientsA":{"passthroughCoefficient":0.5,"reflectionCoefficient":0.1},
		    "attenuationCoefficientsBG":{"passthroughCoefficient":0.6,"reflectionCoefficient":0.1},"fillColor":{"r":160,"g":82,"b":45}}},
		  "obstacles":[{"type":"rectangularObstacle","centerX":10.5,"centerY":20,"angle":90,"thickness":0.5,"materialId":"CONCRETE","breadth":30,"height":0.5,
		     "enclosingRectangle":{"topLeftx":-4.5,"topLefty":19.75,"bottomRightx":25.5,"bottomRighty":20.25}},
		    {"type":"ArchedObstacle","centerX":40,"centerY":40,"angle":-45,"thickness":1,"materialId":"BRICK"},
		    {"type":"EllipticalObstacle","materialId":"GLASS"},{"type":"PolygonObstacle","materialId":"WOOD"}],
		  "obstacleGroupList":[{"id":"INDOOR_MATERIALS","name":"In","visible":true}]},
		  "rfParamsPL":{"signalDecayInflection":12.5},"rfParamsSPM":{"minAttenuationConstant":1},"usesSpmFile":false}`,
		`{"length": 0, "width": 20, "unit": "FEET"}`,
		`{"length": 10, "width": 20, "unit": "INCH"}`,
		`{"length": 10, "width": 20, "unit": "FEET", "obstaclesInfo": {"obstacles": [{"type": "PolygonObstacle", "materialId": "STEEL"}]}}`,
		`{"length": 10, "width": 20, "unit": "FEET", "obstaclesInfo": {"obstacles": [{"type": "PolygonObstacle", "materialId": "BRICK", "breadth": 1}]}}`,
		`{"length": 10, "width": 20, "unit": "FEET", "obstaclesInfo": {"materialProperties": {"X": {"fillColor": {"r": 300}}}}}`,
		`{"length": 10, "width": 20, "unit": "FEET", "obstaclesInfo": {"obstacles": [{"centerX": 1e400}]}}`,
		`{"length": 10, "width": 20, "unit": "FEET", "rfParamsPL": {"minAttenuationConstant": 9}}`,
		`{"length": 1.5}`, `[]`, `null`, ``, `{`, `{} {}`, `{"length": "10"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, in, err := decodeLayout(body, layoutsFuzzFloor)
		if err != nil {
			layoutsFuzzClientError(t, err, wnms.InvalidRequestBody, wnms.ValidationFailed)
			return
		}
		if in == nil || l.LocationID != layoutsFuzzFloor || l.Type != wnms.FloorLayoutType {
			t.Fatalf("layout %+v from %+v", l, in)
		}
		layoutsFuzzCheckRules(t, l)
		again, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		l2, _, err := decodeLayout(again, layoutsFuzzFloor)
		if err != nil {
			t.Fatalf("the accepted layout encoded as %s is refused: %v", again, err)
		}
		if !reflect.DeepEqual(l, l2) {
			t.Fatalf("round trip changed the layout:\n%+v\n%+v", l, l2)
		}
	})
}

// layoutsFuzzCheckRules asserts the rules of api.md §11 on an
// accepted layout.
func layoutsFuzzCheckRules(t *testing.T, l *wnms.FloorLayout) {
	t.Helper()
	if l.Length < 1 || l.Width < 1 || l.Length > wnms.MaxLayoutSide || l.Width > wnms.MaxLayoutSide {
		t.Fatalf("size %d×%d", l.Length, l.Width)
	}
	if l.Unit != "FEET" && l.Unit != "METER" {
		t.Fatalf("unit %q", l.Unit)
	}
	mats := l.ObstaclesInfo.MaterialProperties
	for id := range wnms.BuiltinMaterials() {
		if _, ok := mats[id]; !ok {
			t.Fatalf("built-in material %s missing", id)
		}
	}
	for k, m := range mats {
		if m.ID != k {
			t.Fatalf("material %q has id %q", k, m.ID)
		}
		for _, c := range []int{m.FillColor.R, m.FillColor.G, m.FillColor.B} {
			if c < 0 || c > 255 {
				t.Fatalf("material %s colour %+v", k, m.FillColor)
			}
		}
		for _, a := range []wnms.Attenuation{m.AttenuationCoefficientsA, m.AttenuationCoefficientsBG} {
			if !(a.PassthroughCoefficient >= 0 && a.ReflectionCoefficient >= 0 && a.PassthroughCoefficient+a.ReflectionCoefficient <= 1+1e-9) {
				t.Fatalf("material %s coefficients %+v", k, a)
			}
		}
		if m.GroupID != wnms.IndoorMaterials && m.GroupID != wnms.OutdoorMaterials && m.GroupID != wnms.OtherMaterials {
			t.Fatalf("material %s group %q", k, m.GroupID)
		}
	}
	if len(l.ObstaclesInfo.Obstacles) > wnms.MaxObstacles {
		t.Fatalf("%d obstacles", len(l.ObstaclesInfo.Obstacles))
	}
	for i, o := range l.ObstaclesInfo.Obstacles {
		switch o.Type {
		case wnms.RectangularObstacle:
			if o.Breadth == nil || o.Height == nil || !(*o.Breadth > 0) || !(*o.Height > 0) {
				t.Fatalf("obstacle %d: rectangle without a size: %+v", i, o)
			}
		case wnms.ArchedObstacle, wnms.EllipticalObstacle, wnms.PolygonObstacle:
			if o.Breadth != nil || o.Height != nil {
				t.Fatalf("obstacle %d: %s with breadth or height", i, o.Type)
			}
		default:
			t.Fatalf("obstacle %d: type %q", i, o.Type)
		}
		if _, ok := mats[o.MaterialID]; !ok {
			t.Fatalf("obstacle %d: material %q", i, o.MaterialID)
		}
		if !(o.Thickness >= 0) || !(o.Angle >= -360 && o.Angle <= 360) || o.CenterX != o.CenterX || o.CenterY != o.CenterY {
			t.Fatalf("obstacle %d: numbers %+v", i, o)
		}
	}
	for _, p := range []wnms.RFParams{l.RFParamsPL, l.RFParamsSPM} {
		if !(p.MinAttenuationConstant >= 0 && p.MinAttenuationConstant <= p.MaxAttenuationConstant && p.SignalDecayInflection >= 0 && p.SignaleDecaySlope >= 0) {
			t.Fatalf("rfParams %+v", p)
		}
	}
	if (l.UsesSpmFile && l.RFParams != l.RFParamsSPM) || (!l.UsesSpmFile && l.RFParams != l.RFParamsPL) {
		t.Fatalf("rfParams %+v with usesSpmFile %v", l.RFParams, l.UsesSpmFile)
	}
}

// layoutsFuzzMax is the file limit of the fuzzed uploads, small so that
// the limit is reached.
const layoutsFuzzMax = 4096

// FuzzLayoutUpload feeds arbitrary bodies, under a multipart content type,
// to the upload parser and the image check. A refusal is a 4xx *wnms.Error;
// an accepted file is within the limit, and an accepted image is a GIF,
// JPEG or PNG within the pixel limit.
func FuzzLayoutUpload(f *testing.F) {
	const boundary = "fuzzboundary"
	part := func(name string, data string) string {
		return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"f\"\r\n" +
			"Content-Type: application/octet-stream\r\n\r\n" + data + "\r\n"
	}
	end := "--" + boundary + "--\r\n"
	gif1 := "GIF89a\x01\x00\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
	png1 := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00:~\x9bU\x00\x00\x00\nIDATx\x9cc`\x00\x00\x00\x02\x00\x01H\xaf\xa4q\x00\x00\x00\x00IEND\xaeB`\x82"
	for _, seed := range []struct{ ct, body string }{
		{"multipart/form-data; boundary=" + boundary, part("uploadedFile", gif1) + end},
		{"multipart/form-data; boundary=" + boundary, part("uploadedFile", png1) + end},
		{"multipart/form-data; boundary=" + boundary, part("comment", "x") + part("uploadedFile", "\xff\xd8\xff\xe0junk") + end},
		{"multipart/form-data; boundary=" + boundary, part("other", "x") + end},
		{"multipart/form-data; boundary=" + boundary, part("uploadedFile", strings.Repeat("A", layoutsFuzzMax+1)) + end},
		{"multipart/form-data; boundary=" + boundary, part("uploadedFile", "abc")},
		{"multipart/form-data; boundary=" + boundary, end},
		{"multipart/form-data", part("uploadedFile", "abc") + end},
		{"multipart/mixed; boundary=" + boundary, end},
		{"application/json", `{"uploadedFile": "x"}`},
		{"", ""},
	} {
		f.Add(seed.ct, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/layouts/image?locationid=7", bytes.NewReader(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		data, err := httpkit.ReadUpload(httptest.NewRecorder(), r, layoutUploadPart, layoutsFuzzMax)
		if err != nil {
			layoutsFuzzClientError(t, err, wnms.UnsupportedMediaType, wnms.InvalidRequestBody, wnms.ValidationFailed, wnms.PayloadTooLarge)
			return
		}
		if len(data) > layoutsFuzzMax {
			t.Fatalf("accepted %d bytes over the limit %d", len(data), layoutsFuzzMax)
		}
		ct, err := sniffLayoutImage(data)
		if err != nil {
			layoutsFuzzClientError(t, err, wnms.UnsupportedMediaType, wnms.ValidationFailed)
			return
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || "image/"+format != ct {
			t.Fatalf("accepted as %s: %v %s", ct, err, format)
		}
		if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > wnms.MaxImageSide || cfg.Height > wnms.MaxImageSide {
			t.Fatalf("accepted %d×%d", cfg.Width, cfg.Height)
		}
	})
}
