package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// layoutsWorld is a site folder with two floors of customer 1.
type layoutsWorld struct {
	E              *apitest.Env
	Site           *wnms.Location
	Floor, Floor2  *wnms.Location
	ForeignFloor   *wnms.Location
	OtherSite      *wnms.Location
	OtherSiteFloor *wnms.Location
}

func newLayoutsWorld(t *testing.T, b apitest.Backend) *layoutsWorld {
	t.Helper()
	e := apitest.New(t, b)
	w := &layoutsWorld{E: e}
	w.Site = e.NewLocation(t, 0, wnms.FolderLocation, "Site", 1)
	w.Floor = e.NewLocation(t, w.Site.ID.ID, wnms.FloorLocation, "Floor 1", 1)
	w.Floor2 = e.NewLocation(t, w.Site.ID.ID, wnms.FloorLocation, "Floor 2", 1)
	w.OtherSite = e.NewLocation(t, 0, wnms.FolderLocation, "Other site", 1)
	w.OtherSiteFloor = e.NewLocation(t, w.OtherSite.ID.ID, wnms.FloorLocation, "Other floor", 1)
	foreign := e.NewLocation(t, 0, wnms.FolderLocation, "Foreign", 2)
	w.ForeignFloor = e.NewLocation(t, foreign.ID.ID, wnms.FloorLocation, "Foreign floor", 2)
	return w
}

func layoutsPath(call string, id int64) string {
	return fmt.Sprintf("/V5/layouts%s?locationid=%d", call, id)
}

// layoutsBody is a valid layout body with one obstacle of every type
// (rectangular spelled as the samples spell it) and a custom material.
func layoutsBody(id int64) map[string]any {
	return map[string]any{
		"type":     "floorlayout",
		"location": map[string]any{"type": "floorlocation", "id": map[string]any{"type": "locallocationid", "id": id}, "name": "ignored"},
		"length":   120, "width": 80, "unit": "FEET", "calibrated": true,
		"obstaclesInfo": map[string]any{
			"materialProperties": map[string]any{
				"WOOD": map[string]any{"id": "WOOD", "name": "Wood", "groupId": "OTHERS",
					"attenuationCoefficientsA":  map[string]any{"passthroughCoefficient": 0.5, "reflectionCoefficient": 0.1},
					"attenuationCoefficientsBG": map[string]any{"passthroughCoefficient": 0.6, "reflectionCoefficient": 0.1},
					"fillColor":                 map[string]any{"r": 160, "g": 82, "b": 45}},
			},
			"obstacles": []any{
				map[string]any{"type": "rectangularObstacle", "centerX": 10.5, "centerY": 20, "angle": 90, "thickness": 0.5,
					"materialId": "CONCRETE", "breadth": 30, "height": 0.5,
					"enclosingRectangle": map[string]any{"topLeftx": -4.5, "topLefty": 19.75, "bottomRightx": 25.5, "bottomRighty": 20.25}},
				map[string]any{"type": "ArchedObstacle", "centerX": 40, "centerY": 40, "angle": -45.5, "thickness": 1, "materialId": "BRICK"},
				map[string]any{"type": "ELLIPTICALOBSTACLE", "centerX": 60, "centerY": 10, "angle": 0, "thickness": 2, "materialId": "GLASS"},
				map[string]any{"type": "PolygonObstacle", "centerX": 5, "centerY": 5, "angle": 360, "thickness": 0, "materialId": "CONCRETE_COLUMN"},
				map[string]any{"type": "PolygonObstacle", "centerX": 7, "centerY": 70, "angle": 0, "thickness": 0.25, "materialId": "WOOD"},
			},
		},
		"rfParamsPL": map[string]any{"signalDecayInflection": 12.5, "maxAttenuationConstant": 4},
	}
}

func f64(v float64) *float64 { return &v }

// layoutsExpected is what GET answers for layoutsBody on floor.
func layoutsExpected(floor *wnms.Location) wnms.FloorLayout {
	mats := wnms.BuiltinMaterials()
	mats["WOOD"] = wnms.Material{ID: "WOOD", Name: "Wood", GroupID: "OTHERS",
		AttenuationCoefficientsA:  wnms.Attenuation{PassthroughCoefficient: 0.5, ReflectionCoefficient: 0.1},
		AttenuationCoefficientsBG: wnms.Attenuation{PassthroughCoefficient: 0.6, ReflectionCoefficient: 0.1},
		FillColor:                 wnms.Color{R: 160, G: 82, B: 45}}
	loc := *floor
	loc.AccessibleToUser = true
	loc.Path, loc.CustomerID = "", 0
	pl := wnms.DefaultRFParamsPL
	pl.SignalDecayInflection, pl.MaxAttenuationConstant = 12.5, 4
	return wnms.FloorLayout{
		Type: "floorlayout", Location: &loc, Length: 120, Width: 80, Unit: "FEET", Calibrated: true,
		ObstaclesInfo: wnms.ObstaclesInfo{
			MaterialProperties: mats,
			Obstacles: []wnms.Obstacle{
				{Type: "RectangularObstacle", CenterX: 10.5, CenterY: 20, Angle: 90, Thickness: 0.5, MaterialID: "CONCRETE",
					Breadth: f64(30), Height: f64(0.5), EnclosingRectangle: &wnms.Rectangle{TopLeftX: -4.5, TopLeftY: 19.75, BottomRightX: 25.5, BottomRightY: 20.25}},
				{Type: "ArchedObstacle", CenterX: 40, CenterY: 40, Angle: -45.5, Thickness: 1, MaterialID: "BRICK"},
				{Type: "EllipticalObstacle", CenterX: 60, CenterY: 10, Thickness: 2, MaterialID: "GLASS"},
				{Type: "PolygonObstacle", CenterX: 5, CenterY: 5, Angle: 360, MaterialID: "CONCRETE_COLUMN"},
				{Type: "PolygonObstacle", CenterX: 7, CenterY: 70, Thickness: 0.25, MaterialID: "WOOD"},
			},
			ObstacleGroupList: wnms.DefaultObstacleGroups(),
		},
		RFParamsPL: pl, RFParamsSPM: wnms.DefaultRFParamsSPM, RFParams: pl,
	}
}

// layoutsGet reads the layout of a floor, checking the server-set times.
func layoutsGet(t *testing.T, c *apitest.Client, id int64) wnms.FloorLayout {
	t.Helper()
	var l wnms.FloorLayout
	c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Decode(t, &l)
	if l.LastModifiedTime <= 0 || l.LastSensorPlacementChangeTime <= 0 {
		t.Errorf("layout of %d: times not set: %d, %d", id, l.LastModifiedTime, l.LastSensorPlacementChangeTime)
	}
	return l
}

func layoutsWithoutTimes(l wnms.FloorLayout) wnms.FloorLayout {
	l.LastModifiedTime, l.LastSensorPlacementChangeTime = 0, 0
	return l
}

// layoutsPut stores a minimal layout on a floor through the store, as the
// authorization matrix needs.
func layoutsPut(t testing.TB, e *apitest.Env, id int64) {
	t.Helper()
	unit := "METER"
	n := int64(10)
	l, err := (&wnms.LayoutInput{Length: &n, Width: &n, Unit: &unit}).Layout(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.PutLayout(context.Background(), l, nil); err != nil {
		t.Fatal(err)
	}
}

// layoutsAttach attaches a PNG to the layout of a floor through the store
// and returns its key.
func layoutsAttach(t testing.TB, e *apitest.Env, id int64) string {
	t.Helper()
	key := fmt.Sprintf("k%d-%s", id, rand.Text())
	if _, err := e.Store.AttachFile(context.Background(), &wnms.File{Key: key, LocationID: id, Kind: wnms.FileImage,
		ContentType: "image/png", Data: layoutsPNG(t, 4, 4)}); err != nil {
		t.Fatal(err)
	}
	return key
}

func layoutsImage(w, h int) image.Image {
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black, color.RGBA{200, 30, 30, 255}})
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetColorIndex(x, y, uint8((x+y)%3))
		}
	}
	return img
}

func layoutsPNG(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, layoutsImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func layoutsJPEG(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, layoutsImage(w, h), &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func layoutsGIF(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, layoutsImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// layoutsPart is one part of a multipart body.
type layoutsPart struct {
	name, filename, contentType string
	data                        []byte
}

// layoutsMultipart builds a multipart/form-data body of the parts.
func layoutsMultipart(t testing.TB, parts ...layoutsPart) apitest.Raw {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.filename != "" {
			cd += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return apitest.Raw{ContentType: mw.FormDataContentType(), Body: b.Bytes()}
}

// layoutsFile is a multipart body with the file part uploadedFile.
func layoutsFile(t testing.TB, filename string, data []byte) apitest.Raw {
	return layoutsMultipart(t, layoutsPart{name: "uploadedFile", filename: filename, contentType: "application/octet-stream", data: data})
}

func layoutsExpectError(t *testing.T, r *apitest.Response, status int, code, moreInfo string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Errorf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), status, code, r.Body)
		return
	}
	if moreInfo != "" {
		var b struct {
			Errors []struct {
				MoreInfo string `json:"moreInfo"`
			} `json:"errors"`
		}
		json.Unmarshal(r.Body, &b)
		if len(b.Errors) == 0 || b.Errors[0].MoreInfo != moreInfo {
			t.Errorf("moreInfo %+v, want %q; %s", b.Errors, moreInfo, r.Body)
		}
	}
}

func layoutsSfile(key string) string { return "/sfiles?id=" + key }

// A layout round trip: every obstacle type, a custom material, the
// built-in materials and default groups and rfParams; the whole GET body
// sent back is accepted unchanged; a second POST replaces it.
func TestLayoutsRoundTrip(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newLayoutsWorld(t, b)
		c := w.E.Admin
		id := w.Floor.ID.ID
		layoutsExpectError(t, c.Do("GET", layoutsPath("", id), nil), 404, wnms.ResourceNotFound, "")

		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		got := layoutsGet(t, c, id)
		want := layoutsExpected(w.Floor)
		if d := cmp.Diff(want, layoutsWithoutTimes(got)); d != "" {
			t.Fatalf("layout (-want +got):\n%s", d)
		}
		if got.ImageKey != nil || got.SpmFileKey != nil || got.UsesSpmFile {
			t.Errorf("files on a fresh layout: %v %v %v", got.ImageKey, got.SpmFileKey, got.UsesSpmFile)
		}
		// The raw body has the interface's field names and nulls.
		raw := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body
		for _, s := range []string{`"imageKey":null`, `"spmFileKey":null`, `"signaleDecaySlope":`, `"topLeftx":-4.5`,
			`"type":"floorlocation"`, `"parentId":{"type":"locallocationid","id":` + fmt.Sprint(w.Site.ID.ID) + `}`} {
			if !bytes.Contains(raw, []byte(s)) {
				t.Errorf("GET body lacks %s: %s", s, raw)
			}
		}

		// A client sends back what it read: accepted, same layout.
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), apitest.Raw{ContentType: "application/json", Body: raw})
		again := layoutsGet(t, c, id)
		if d := cmp.Diff(want, layoutsWithoutTimes(again)); d != "" {
			t.Errorf("layout after sending it back (-want +got):\n%s", d)
		}
		if again.LastModifiedTime < got.LastModifiedTime {
			t.Errorf("lastModifiedTime went back: %d < %d", again.LastModifiedTime, got.LastModifiedTime)
		}

		// A minimal body: built-in materials and defaults, METER any case.
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), map[string]any{"length": 30, "width": 20, "unit": "meter"})
		minimal := layoutsGet(t, c, id)
		if d := cmp.Diff(wnms.BuiltinMaterials(), minimal.ObstaclesInfo.MaterialProperties); d != "" {
			t.Errorf("default materials (-want +got):\n%s", d)
		}
		if minimal.Unit != "METER" || minimal.Calibrated || len(minimal.ObstaclesInfo.Obstacles) != 0 || minimal.ObstaclesInfo.Obstacles == nil ||
			minimal.RFParamsPL != wnms.DefaultRFParamsPL || minimal.RFParams != wnms.DefaultRFParamsPL || minimal.RFParamsSPM != wnms.DefaultRFParamsSPM ||
			!cmp.Equal(minimal.ObstaclesInfo.ObstacleGroupList, wnms.DefaultObstacleGroups()) {
			t.Errorf("minimal layout: %+v", minimal)
		}
		// Redefining a built-in material wins over the default; an explicit
		// group list is kept.
		body := map[string]any{"length": 30, "width": 20, "unit": "FEET", "obstaclesInfo": map[string]any{
			"materialProperties": map[string]any{"GLASS": map[string]any{"name": "Tinted glass", "groupId": "outdoor_materials",
				"attenuationCoefficientsA":  map[string]any{"passthroughCoefficient": 0.2, "reflectionCoefficient": 0.3},
				"attenuationCoefficientsBG": map[string]any{"passthroughCoefficient": 0.3, "reflectionCoefficient": 0.3},
				"fillColor":                 map[string]any{"r": 0, "g": 0, "b": 255}}},
			"obstacleGroupList": []any{map[string]any{"id": "INDOOR_MATERIALS", "name": "Inside", "visible": false}}}}
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), body)
		red := layoutsGet(t, c, id)
		glass := red.ObstaclesInfo.MaterialProperties["GLASS"]
		if glass.ID != "GLASS" || glass.Name != "Tinted glass" || glass.GroupID != "OUTDOOR_MATERIALS" || glass.AttenuationCoefficientsA.PassthroughCoefficient != 0.2 {
			t.Errorf("redefined GLASS: %+v", glass)
		}
		if red.ObstaclesInfo.MaterialProperties["BRICK"] != wnms.BuiltinMaterials()["BRICK"] {
			t.Errorf("BRICK not kept: %+v", red.ObstaclesInfo.MaterialProperties["BRICK"])
		}
		if d := cmp.Diff([]wnms.ObstacleGroup{{ID: "INDOOR_MATERIALS", Name: "Inside"}}, red.ObstaclesInfo.ObstacleGroupList); d != "" {
			t.Errorf("groups (-want +got):\n%s", d)
		}
		// GET serves the stored obstacles as they are; a location name that
		// looks like the field does not confuse it.
		tricky := w.E.NewLocation(t, w.Site.ID.ID, wnms.FloorLocation, `x","obstaclesInfo":{"materialProperties":null,"obstacles":null,"obstacleGroupList":null}`, 1)
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", tricky.ID.ID), layoutsBody(tricky.ID.ID))
		if d := cmp.Diff(layoutsExpected(tricky), layoutsWithoutTimes(layoutsGet(t, c, tricky.ID.ID))); d != "" {
			t.Errorf("layout of a floor with a tricky name (-want +got):\n%s", d)
		}
		// The other floor is untouched; any version segment works.
		layoutsExpectError(t, c.Do("GET", fmt.Sprintf("/v4/layouts?locationid=%d", w.Floor2.ID.ID), nil), 404, wnms.ResourceNotFound, "")
		c.Expect(http.StatusOK, "GET", fmt.Sprintf("/v4/layouts?locationid=%d", id), nil)
	})
}

// Every validation rule: the error code and field, and nothing stored.
func TestLayoutsValidation(t *testing.T) {
	type mut func(b map[string]any)
	obstacle := func(o map[string]any) mut {
		return func(b map[string]any) { b["obstaclesInfo"].(map[string]any)["obstacles"] = []any{o} }
	}
	material := func(m map[string]any) mut {
		return func(b map[string]any) {
			b["obstaclesInfo"].(map[string]any)["materialProperties"] = map[string]any{"WOOD": m}
		}
	}
	wood := func(extra map[string]any) map[string]any {
		m := map[string]any{"id": "WOOD", "name": "Wood", "groupId": "OTHERS",
			"attenuationCoefficientsA":  map[string]any{"passthroughCoefficient": 0.5, "reflectionCoefficient": 0.1},
			"attenuationCoefficientsBG": map[string]any{"passthroughCoefficient": 0.6, "reflectionCoefficient": 0.1},
			"fillColor":                 map[string]any{"r": 1, "g": 2, "b": 3}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	rect := func(extra map[string]any) map[string]any {
		o := map[string]any{"type": "RectangularObstacle", "centerX": 1, "centerY": 1, "angle": 0, "thickness": 1,
			"materialId": "BRICK", "breadth": 2, "height": 3}
		for k, v := range extra {
			if v == nil {
				delete(o, k)
			} else {
				o[k] = v
			}
		}
		return o
	}
	many := make([]any, wnms.MaxObstacles+1)
	for i := range many {
		many[i] = map[string]any{"type": "PolygonObstacle", "materialId": "BRICK"}
	}
	const o0 = "obstaclesInfo.obstacles[0]"
	cases := []struct {
		name     string
		mut      mut
		code     string
		moreInfo string
	}{
		{"length 0", func(b map[string]any) { b["length"] = 0 }, wnms.ValidationFailed, "length"},
		{"negative width", func(b map[string]any) { b["width"] = -5 }, wnms.ValidationFailed, "width"},
		{"huge length", func(b map[string]any) { b["length"] = 1_000_001 }, wnms.ValidationFailed, "length"},
		{"no length", func(b map[string]any) { delete(b, "length") }, wnms.ValidationFailed, "length"},
		{"fractional width", func(b map[string]any) { b["width"] = 1.5 }, wnms.InvalidRequestBody, "width"},
		{"no unit", func(b map[string]any) { delete(b, "unit") }, wnms.ValidationFailed, "unit"},
		{"unknown unit", func(b map[string]any) { b["unit"] = "INCH" }, wnms.InvalidRequestBody, "unit"},
		{"wrong type", func(b map[string]any) { b["type"] = "floorplan" }, wnms.InvalidRequestBody, "type"},
		{"other location id", func(b map[string]any) {
			b["location"] = map[string]any{"id": map[string]any{"type": "locallocationid", "id": 12345}}
		}, wnms.ValidationFailed, "location.id"},
		{"unknown obstacle type", obstacle(rect(map[string]any{"type": "TriangleObstacle"})), wnms.InvalidRequestBody, o0 + ".type"},
		{"no obstacle type", obstacle(rect(map[string]any{"type": ""})), wnms.InvalidRequestBody, o0 + ".type"},
		{"unknown material", obstacle(rect(map[string]any{"materialId": "STEEL"})), wnms.ValidationFailed, o0 + ".materialId"},
		{"no material", obstacle(rect(map[string]any{"materialId": nil})), wnms.ValidationFailed, o0 + ".materialId"},
		{"negative thickness", obstacle(rect(map[string]any{"thickness": -1})), wnms.ValidationFailed, o0 + ".thickness"},
		{"angle too large", obstacle(rect(map[string]any{"angle": 720})), wnms.ValidationFailed, o0 + ".angle"},
		{"center far away", obstacle(rect(map[string]any{"centerX": 1e12})), wnms.ValidationFailed, o0 + ".centerX"},
		{"number overflow", obstacle(rect(map[string]any{"centerY": json.RawMessage("1e400")})), wnms.InvalidRequestBody, "obstaclesInfo.obstacles.centerY"},
		{"string number", obstacle(rect(map[string]any{"centerY": "3"})), wnms.InvalidRequestBody, "obstaclesInfo.obstacles.centerY"},
		{"rectangle without height", obstacle(rect(map[string]any{"height": nil})), wnms.ValidationFailed, o0 + ".height"},
		{"rectangle of zero breadth", obstacle(rect(map[string]any{"breadth": 0})), wnms.ValidationFailed, o0 + ".breadth"},
		{"breadth on a polygon", obstacle(rect(map[string]any{"type": "PolygonObstacle", "height": nil})), wnms.ValidationFailed, o0},
		{"height on an ellipse", obstacle(rect(map[string]any{"type": "EllipticalObstacle", "breadth": nil})), wnms.ValidationFailed, o0},
		{"bad enclosing rectangle", obstacle(rect(map[string]any{"enclosingRectangle": map[string]any{"topLeftx": -2e9}})), wnms.ValidationFailed, o0 + ".enclosingRectangle.topLeftx"},
		{"null obstacle", func(b map[string]any) { b["obstaclesInfo"].(map[string]any)["obstacles"] = []any{nil} }, wnms.ValidationFailed, o0},
		{"too many obstacles", func(b map[string]any) { b["obstaclesInfo"].(map[string]any)["obstacles"] = many }, wnms.ValidationFailed, "obstaclesInfo.obstacles"},
		{"red above 255", material(wood(map[string]any{"fillColor": map[string]any{"r": 256, "g": 0, "b": 0}})), wnms.ValidationFailed, "obstaclesInfo.materialProperties.WOOD.fillColor.r"},
		{"negative blue", material(wood(map[string]any{"fillColor": map[string]any{"r": 0, "g": 0, "b": -1}})), wnms.ValidationFailed, "obstaclesInfo.materialProperties.WOOD.fillColor.b"},
		{"passthrough above 1", material(wood(map[string]any{"attenuationCoefficientsA": map[string]any{"passthroughCoefficient": 1.5}})), wnms.ValidationFailed, "obstaclesInfo.materialProperties.WOOD.attenuationCoefficientsA.passthroughCoefficient"},
		{"coefficients above 1 together", material(wood(map[string]any{"attenuationCoefficientsBG": map[string]any{"passthroughCoefficient": 0.7, "reflectionCoefficient": 0.4}})), wnms.ValidationFailed, "obstaclesInfo.materialProperties.WOOD.attenuationCoefficientsBG"},
		{"material id not its key", material(wood(map[string]any{"id": "OAK"})), wnms.ValidationFailed, "obstaclesInfo.materialProperties.WOOD.id"},
		{"unknown material group", material(wood(map[string]any{"groupId": "ROOF"})), wnms.InvalidRequestBody, "obstaclesInfo.materialProperties.WOOD.groupId"},
		{"control character in a name", material(wood(map[string]any{"name": "Wo\x00od"})), wnms.ValidationFailed, "obstaclesInfo.materialProperties.WOOD.name"},
		{"unknown group", func(b map[string]any) {
			b["obstaclesInfo"].(map[string]any)["obstacleGroupList"] = []any{map[string]any{"id": "ROOF"}}
		}, wnms.InvalidRequestBody, "obstaclesInfo.obstacleGroupList[0].id"},
		{"group twice", func(b map[string]any) {
			b["obstaclesInfo"].(map[string]any)["obstacleGroupList"] = []any{map[string]any{"id": "OTHERS"}, map[string]any{"id": "others"}}
		}, wnms.ValidationFailed, "obstaclesInfo.obstacleGroupList[1].id"},
		{"min above max attenuation", func(b map[string]any) {
			b["rfParamsPL"] = map[string]any{"minAttenuationConstant": 5, "maxAttenuationConstant": 3}
		}, wnms.ValidationFailed, "rfParamsPL.minAttenuationConstant"},
		{"negative inflection", func(b map[string]any) {
			b["rfParamsSPM"] = map[string]any{"signalDecayInflection": -1}
		}, wnms.ValidationFailed, "rfParamsSPM.signalDecayInflection"},
		{"SPM without a file", func(b map[string]any) { b["usesSpmFile"] = true }, wnms.ValidationFailed, "usesSpmFile"},
		{"obstacles not a list", func(b map[string]any) { b["obstaclesInfo"].(map[string]any)["obstacles"] = "none" }, wnms.InvalidRequestBody, "obstaclesInfo.obstacles"},
	}
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newLayoutsWorld(t, b)
		c := w.E.Admin
		id := w.Floor.ID.ID
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		before := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				for _, floor := range []int64{id, w.Floor2.ID.ID} {
					body := layoutsBody(floor)
					tc.mut(body)
					layoutsExpectError(t, c.Do("POST", layoutsPath("", floor), body), 400, tc.code, tc.moreInfo)
				}
			})
		}
		// Parameter and envelope errors.
		body := layoutsBody(id)
		layoutsExpectError(t, c.Do("POST", "/V5/layouts", body), 400, wnms.MissingParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", "/V5/layouts?locationid=x", body), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", 987654), body), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", w.Site.ID.ID), layoutsBody(w.Site.ID.ID)), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", 0), layoutsBody(0)), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", -1), layoutsBody(-1)), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", id), apitest.Raw{ContentType: "text/plain", Body: []byte("{}")}), 415, wnms.UnsupportedMediaType, "")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", id), apitest.Raw{ContentType: "application/json", Body: []byte(`{"length": 3,`)}), 400, wnms.InvalidRequestBody, "")
		layoutsExpectError(t, c.Do("POST", layoutsPath("", id), apitest.Raw{ContentType: "application/json", Body: []byte(`{} {}`)}), 400, wnms.InvalidRequestBody, "")
		// A layout body may be 16 MiB (larger than other JSON bodies): one
		// byte more is 413, and one of 2 MiB is read (and judged on its
		// content: an unknown field is ignored, so it is stored).
		padded := func(n int) []byte {
			head := []byte(`{"length": 3, "width": 3, "unit": "FEET", "pad": "`)
			return append(append(head, bytes.Repeat([]byte("x"), n-len(head)-2)...), '"', '}')
		}
		layoutsExpectError(t, c.Do("POST", layoutsPath("", id), apitest.Raw{ContentType: "application/json", Body: padded(httpkit.MaxLayoutBody + 1)}), 413, wnms.PayloadTooLarge, "")
		if r := c.Do("POST", layoutsPath("", w.Floor2.ID.ID), apitest.Raw{ContentType: "application/json", Body: padded(2 << 20)}); r.Status == http.StatusRequestEntityTooLarge {
			t.Errorf("a 2 MiB layout body: %d %s", r.Status, r.Body)
		}
		c.Do("DELETE", layoutsPath("", w.Floor2.ID.ID), nil)
		for _, call := range []string{"", "/image"} {
			layoutsExpectError(t, c.Do("GET", "/V5/layouts"+call, nil), 400, wnms.MissingParameter, "locationid")
			layoutsExpectError(t, c.Do("GET", layoutsPath(call, w.Site.ID.ID), nil), 400, wnms.InvalidParameter, "locationid")
		}
		layoutsExpectError(t, c.Do("DELETE", layoutsPath("", w.Site.ID.ID), nil), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("DELETE", layoutsPath("", w.Floor2.ID.ID), nil), 404, wnms.ResourceNotFound, "")

		// Nothing changed: the first floor's layout is byte for byte the
		// same (times included), the second floor has none.
		if after := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body; !bytes.Equal(before, after) {
			t.Errorf("a rejected request changed the layout:\nbefore %s\nafter  %s", before, after)
		}
		layoutsExpectError(t, c.Do("GET", layoutsPath("", w.Floor2.ID.ID), nil), 404, wnms.ResourceNotFound, "")

		// Exactly the limit of obstacles is fine.
		body = layoutsBody(id)
		body["obstaclesInfo"].(map[string]any)["obstacles"] = many[:wnms.MaxObstacles]
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), body)
		if l := layoutsGet(t, c, id); len(l.ObstaclesInfo.Obstacles) != wnms.MaxObstacles {
			t.Errorf("%d obstacles stored", len(l.ObstaclesInfo.Obstacles))
		}
	})
}

// Images: PNG, JPEG and GIF by content; the link and the bytes; each
// upload replaces the previous image; every refusal leaves the layout as
// it was.
func TestLayoutsImageUpload(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newLayoutsWorld(t, b)
		c := w.E.Admin
		id := w.Floor.ID.ID
		imgPath := layoutsPath("/image", id)

		// No layout yet: nothing to attach to.
		layoutsExpectError(t, c.Do("POST", imgPath, layoutsFile(t, "a.png", layoutsPNG(t, 8, 8))), 404, wnms.ResourceNotFound, "")
		layoutsExpectError(t, c.Do("GET", imgPath, nil), 404, wnms.ResourceNotFound, "")
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		layoutsExpectError(t, c.Do("GET", imgPath, nil), 404, wnms.ResourceNotFound, "")
		layoutsExpectError(t, c.Do("POST", layoutsPath("/image", w.Site.ID.ID), layoutsFile(t, "a.png", layoutsPNG(t, 8, 8))), 400, wnms.InvalidParameter, "locationid")

		var prev string
		for _, img := range []struct {
			name, ct string
			data     []byte
		}{
			{"plan.png", "image/png", layoutsPNG(t, 64, 32)},
			// The declared name and type do not matter, the content does.
			{"plan.txt", "image/jpeg", layoutsJPEG(t, 40, 30)},
			{"plan.gif", "image/gif", layoutsGIF(t, 16, 16)},
		} {
			var l wnms.FloorLayout
			c.Expect(http.StatusOK, "POST", imgPath, layoutsMultipart(t,
				layoutsPart{name: "comment", data: []byte("ignored")},
				layoutsPart{name: "uploadedFile", filename: img.name, contentType: "text/plain", data: img.data})).Decode(t, &l)
			if l.ImageKey == nil || len(*l.ImageKey) != 43 || l.Location == nil || l.Location.ID.ID != id || l.Length != 120 {
				t.Fatalf("%s: layout %+v", img.name, l)
			}
			key := *l.ImageKey
			if d := cmp.Diff(layoutsGet(t, c, id), l); d != "" {
				t.Errorf("%s: upload answer and GET differ (-get +upload):\n%s", img.name, d)
			}
			r := c.Expect(http.StatusOK, "GET", imgPath, nil)
			if string(r.Body) != "webservice/sfiles?id="+key || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("%s: link %q (%s)", img.name, r.Body, r.Header.Get("Content-Type"))
			}
			f := c.Expect(http.StatusOK, "GET", layoutsSfile(key), nil)
			if !bytes.Equal(f.Body, img.data) || f.Header.Get("Content-Type") != img.ct || f.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: sfiles %s, %d bytes", img.name, f.Header.Get("Content-Type"), len(f.Body))
			}
			// The link works as given, below the base path's parent, and
			// with a version segment.
			c.Expect(http.StatusOK, "GET", "/new/"+string(r.Body), nil)
			c.Expect(http.StatusOK, "GET", "/V5/sfiles?id="+key, nil)
			if prev != "" {
				layoutsExpectError(t, c.Do("GET", layoutsSfile(prev), nil), 404, wnms.ResourceNotFound, "")
				if _, err := w.E.Store.File(context.Background(), prev); wnms.ErrorCode(err) != wnms.ResourceNotFound {
					t.Errorf("replaced image still stored: %v", err)
				}
			}
			prev = key
		}

		// A layout POST keeps the image.
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		before := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body
		if l := layoutsGet(t, c, id); l.ImageKey == nil || *l.ImageKey != prev {
			t.Fatalf("image key after POST: %v, want %s", l.ImageKey, prev)
		}

		// Refusals.
		pngHeader := layoutsPNG(t, 8, 8)[:16]
		tooLarge := make([]byte, wnms.MaxImageSize+1)
		copy(tooLarge, layoutsPNG(t, 8, 8))
		cases := []struct {
			name   string
			body   apitest.Raw
			status int
			code   string
		}{
			{"text", layoutsFile(t, "plan.png", []byte("this is not an image at all")), 415, wnms.UnsupportedMediaType},
			{"empty file", layoutsFile(t, "plan.png", nil), 415, wnms.UnsupportedMediaType},
			{"bmp", layoutsFile(t, "plan.bmp", append([]byte("BM"), make([]byte, 64)...)), 415, wnms.UnsupportedMediaType},
			{"truncated png", layoutsFile(t, "plan.png", pngHeader), 415, wnms.UnsupportedMediaType},
			{"png magic, junk", layoutsFile(t, "plan.png", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)), 415, wnms.UnsupportedMediaType},
			{"json body", apitest.Raw{ContentType: "application/json", Body: []byte(`{"uploadedFile": "x"}`)}, 415, wnms.UnsupportedMediaType},
			{"no content type", apitest.Raw{Body: layoutsPNG(t, 8, 8)}, 415, wnms.UnsupportedMediaType},
			{"no boundary", apitest.Raw{ContentType: "multipart/form-data", Body: []byte("--x\r\n")}, 415, wnms.UnsupportedMediaType},
			{"mixed", apitest.Raw{ContentType: "multipart/mixed; boundary=x", Body: []byte("--x--\r\n")}, 415, wnms.UnsupportedMediaType},
			{"no uploadedFile part", layoutsMultipart(t, layoutsPart{name: "file", filename: "a.png", data: layoutsPNG(t, 8, 8)}), 400, wnms.ValidationFailed},
			{"no parts", apitest.Raw{ContentType: "multipart/form-data; boundary=x", Body: []byte("--x--\r\n")}, 400, wnms.ValidationFailed},
			{"malformed multipart", apitest.Raw{ContentType: "multipart/form-data; boundary=x", Body: []byte("--x\r\nContent-Disposition: form-data; name=\"uploadedFile\"\r\n\r\nabc")}, 400, wnms.InvalidRequestBody},
			{"too wide", layoutsFile(t, "wide.png", layoutsPNG(t, wnms.MaxImageSide+1, 1)), 400, wnms.ValidationFailed},
			{"too tall", layoutsFile(t, "tall.gif", layoutsGIF(t, 1, wnms.MaxImageSide+1)), 400, wnms.ValidationFailed},
			{"file over 20 MiB", layoutsFile(t, "big.png", tooLarge), 413, wnms.PayloadTooLarge},
			{"body over the limit", layoutsMultipart(t, layoutsPart{name: "junk", data: make([]byte, wnms.MaxImageSize+2<<20)},
				layoutsPart{name: "uploadedFile", data: layoutsPNG(t, 8, 8)}), 413, wnms.PayloadTooLarge},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				layoutsExpectError(t, c.Do("POST", imgPath, tc.body), tc.status, tc.code, "")
			})
		}
		if after := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body; !bytes.Equal(before, after) {
			t.Errorf("a refused upload changed the layout:\nbefore %s\nafter  %s", before, after)
		}
		c.Expect(http.StatusOK, "GET", layoutsSfile(prev), nil)

		// The limits themselves are accepted: 20,000 px a side, 20 MiB.
		c.Expect(http.StatusOK, "POST", imgPath, layoutsFile(t, "edge.png", layoutsPNG(t, wnms.MaxImageSide, 1)))
		exact := make([]byte, wnms.MaxImageSize)
		copy(exact, layoutsPNG(t, 8, 8))
		var l wnms.FloorLayout
		c.Expect(http.StatusOK, "POST", imgPath, layoutsFile(t, "exact.png", exact)).Decode(t, &l)
		if f := c.Expect(http.StatusOK, "GET", layoutsSfile(*l.ImageKey), nil); len(f.Body) != wnms.MaxImageSize {
			t.Errorf("20 MiB image read back as %d bytes", len(f.Body))
		}

		// sfiles: the key is required, unknown keys are not found.
		layoutsExpectError(t, c.Do("GET", "/sfiles", nil), 400, wnms.MissingParameter, "id")
		layoutsExpectError(t, c.Do("GET", layoutsSfile("nope"), nil), 404, wnms.ResourceNotFound, "")
		layoutsExpectError(t, c.Do("GET", layoutsSfile(strings.Repeat("a", 200)), nil), 404, wnms.ResourceNotFound, "")
		if r := w.E.NewClient().Do("GET", layoutsSfile(*l.ImageKey), nil); r.Status != http.StatusUnauthorized {
			t.Errorf("sfiles without a session: %d", r.Status)
		}
	})
}

// An SPM file switches the layout to the SPM radio parameters; a layout
// POST may switch back and forth while the file stays.
func TestLayoutsSPMUpload(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newLayoutsWorld(t, b)
		c := w.E.Admin
		id := w.Floor.ID.ID
		spmPath := layoutsPath("/spm", id)
		spm := make([]byte, 300_000)
		rand.Read(spm)

		layoutsExpectError(t, c.Do("POST", spmPath, layoutsFile(t, "f.spm", spm)), 404, wnms.ResourceNotFound, "")
		body := layoutsBody(id)
		body["rfParamsSPM"] = map[string]any{"signalDecayInflection": 21.5}
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), body)
		c.Expect(http.StatusNoContent, "POST", spmPath, layoutsFile(t, "f.spm", spm))
		l := layoutsGet(t, c, id)
		wantSPM := wnms.DefaultRFParamsSPM
		wantSPM.SignalDecayInflection = 21.5
		if !l.UsesSpmFile || l.SpmFileKey == nil || l.RFParams != wantSPM || l.RFParamsSPM != wantSPM || l.RFParamsPL == wantSPM {
			t.Fatalf("after SPM upload: uses %v key %v rfParams %+v", l.UsesSpmFile, l.SpmFileKey, l.RFParams)
		}
		first := *l.SpmFileKey
		f := c.Expect(http.StatusOK, "GET", layoutsSfile(first), nil)
		if !bytes.Equal(f.Body, spm) || f.Header.Get("Content-Type") != "application/octet-stream" ||
			!strings.HasPrefix(f.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("SPM file: %s %s, %d bytes", f.Header.Get("Content-Type"), f.Header.Get("Content-Disposition"), len(f.Body))
		}

		// A POST without usesSpmFile keeps it; false switches to the
		// path-loss parameters and keeps the file; true switches back.
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), body)
		if l := layoutsGet(t, c, id); !l.UsesSpmFile || l.SpmFileKey == nil || *l.SpmFileKey != first || l.RFParams != wantSPM {
			t.Errorf("after POST: uses %v key %v", l.UsesSpmFile, l.SpmFileKey)
		}
		body["usesSpmFile"] = false
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), body)
		if l := layoutsGet(t, c, id); l.UsesSpmFile || l.SpmFileKey == nil || l.RFParams != l.RFParamsPL {
			t.Errorf("after usesSpmFile false: uses %v key %v rfParams %+v", l.UsesSpmFile, l.SpmFileKey, l.RFParams)
		}
		body["usesSpmFile"] = true
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), body)
		if l := layoutsGet(t, c, id); !l.UsesSpmFile || l.RFParams != wantSPM {
			t.Errorf("after usesSpmFile true: uses %v rfParams %+v", l.UsesSpmFile, l.RFParams)
		}

		// A new file replaces the old one.
		spm2 := []byte("SPM v2")
		c.Expect(http.StatusNoContent, "POST", spmPath, layoutsFile(t, "g.spm", spm2))
		l = layoutsGet(t, c, id)
		if *l.SpmFileKey == first {
			t.Fatal("the SPM key did not change")
		}
		layoutsExpectError(t, c.Do("GET", layoutsSfile(first), nil), 404, wnms.ResourceNotFound, "")
		if f := c.Expect(http.StatusOK, "GET", layoutsSfile(*l.SpmFileKey), nil); !bytes.Equal(f.Body, spm2) {
			t.Errorf("second SPM file: %q", f.Body)
		}

		before := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body
		layoutsExpectError(t, c.Do("POST", spmPath, layoutsFile(t, "e.spm", nil)), 400, wnms.ValidationFailed, "uploadedFile")
		layoutsExpectError(t, c.Do("POST", spmPath, layoutsMultipart(t, layoutsPart{name: "other", data: spm2})), 400, wnms.ValidationFailed, "uploadedFile")
		layoutsExpectError(t, c.Do("POST", spmPath, apitest.Raw{ContentType: "application/octet-stream", Body: spm2}), 415, wnms.UnsupportedMediaType, "")
		layoutsExpectError(t, c.Do("POST", layoutsPath("/spm", w.Site.ID.ID), layoutsFile(t, "f.spm", spm2)), 400, wnms.InvalidParameter, "locationid")
		layoutsExpectError(t, c.Do("POST", spmPath, layoutsFile(t, "huge.spm", make([]byte, wnms.MaxSPMSize+1))), 413, wnms.PayloadTooLarge, "")
		if after := c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil).Body; !bytes.Equal(before, after) {
			t.Errorf("a refused SPM upload changed the layout:\nbefore %s\nafter  %s", before, after)
		}
	})
}

// Deleting a layout deletes its files; a floor with a layout cannot be
// deleted until its layout is.
func TestLayoutsDelete(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newLayoutsWorld(t, b)
		c := w.E.Admin
		id := w.Floor.ID.ID
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		var l wnms.FloorLayout
		c.Expect(http.StatusOK, "POST", layoutsPath("/image", id), layoutsFile(t, "a.png", layoutsPNG(t, 10, 10))).Decode(t, &l)
		c.Expect(http.StatusNoContent, "POST", layoutsPath("/spm", id), layoutsFile(t, "a.spm", []byte("spm")))
		l = layoutsGet(t, c, id)
		keys := []string{*l.ImageKey, *l.SpmFileKey}
		// Another floor's layout and files are not touched.
		c.Expect(http.StatusNoContent, "POST", layoutsPath("", w.Floor2.ID.ID), layoutsBody(w.Floor2.ID.ID))
		var l2 wnms.FloorLayout
		c.Expect(http.StatusOK, "POST", layoutsPath("/image", w.Floor2.ID.ID), layoutsFile(t, "b.png", layoutsPNG(t, 5, 5))).Decode(t, &l2)

		layoutsExpectError(t, c.Do("DELETE", fmt.Sprintf("/V2/locations/%d", id), nil), 409, wnms.Conflict, "")
		c.Expect(http.StatusOK, "GET", layoutsPath("", id), nil)

		c.Expect(http.StatusNoContent, "DELETE", layoutsPath("", id), nil)
		layoutsExpectError(t, c.Do("GET", layoutsPath("", id), nil), 404, wnms.ResourceNotFound, "")
		layoutsExpectError(t, c.Do("GET", layoutsPath("/image", id), nil), 404, wnms.ResourceNotFound, "")
		for _, k := range keys {
			layoutsExpectError(t, c.Do("GET", layoutsSfile(k), nil), 404, wnms.ResourceNotFound, "")
			if _, err := w.E.Store.File(context.Background(), k); wnms.ErrorCode(err) != wnms.ResourceNotFound {
				t.Errorf("file %s still stored: %v", k, err)
			}
		}
		layoutsExpectError(t, c.Do("DELETE", layoutsPath("", id), nil), 404, wnms.ResourceNotFound, "")
		c.Expect(http.StatusOK, "GET", layoutsSfile(*l2.ImageKey), nil)
		c.Expect(http.StatusOK, "GET", layoutsPath("", w.Floor2.ID.ID), nil)

		// Without its layout the floor can go.
		c.Expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/V2/locations/%d", id), nil)
		layoutsExpectError(t, c.Do("GET", layoutsPath("", id), nil), 400, wnms.InvalidParameter, "locationid")
	})
}

// Scope: a caller sees and changes only the layouts of its floors, and
// reads only their files; another customer's layouts are out of reach.
func TestLayoutsScope(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		w := newLayoutsWorld(t, b)
		id := w.Floor.ID.ID
		w.E.Admin.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		var l wnms.FloorLayout
		w.E.Admin.Expect(http.StatusOK, "POST", layoutsPath("/image", id), layoutsFile(t, "a.png", layoutsPNG(t, 10, 10))).Decode(t, &l)
		key := *l.ImageKey

		_, site := w.E.NewUser(t, apitest.UserSpec{Role: wnms.Operator, Locations: []int64{w.Site.ID.ID}})
		_, elsewhere := w.E.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Locations: []int64{w.OtherSite.ID.ID}})
		_, foreign := w.E.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser, Customer: 2})
		_, viewer := w.E.NewUser(t, apitest.UserSpec{Role: wnms.Viewer, Locations: []int64{w.Floor.ID.ID}})

		// In scope.
		if got := layoutsGet(t, site, id); got.Location.Name != "Floor 1" || !got.Location.AccessibleToUser {
			t.Errorf("site operator reads %+v", got.Location)
		}
		site.Expect(http.StatusOK, "GET", layoutsSfile(key), nil)
		viewer.Expect(http.StatusOK, "GET", layoutsSfile(key), nil)
		viewer.Expect(http.StatusOK, "GET", layoutsPath("/image", id), nil)
		// A viewer may set a layout (the route table), not delete it or upload.
		viewer.Expect(http.StatusNoContent, "POST", layoutsPath("", id), layoutsBody(id))
		layoutsExpectError(t, viewer.Do("DELETE", layoutsPath("", id), nil), 403, wnms.AccessDenied, "")
		layoutsExpectError(t, viewer.Do("POST", layoutsPath("/image", id), layoutsFile(t, "a.png", layoutsPNG(t, 4, 4))), 403, wnms.AccessDenied, "")
		layoutsExpectError(t, viewer.Do("POST", layoutsPath("/spm", id), layoutsFile(t, "a.spm", []byte("x"))), 403, wnms.AccessDenied, "")

		// Out of scope: 403 on the layout calls. Another customer: the floor
		// does not exist for it (400 on locationid, as for an unknown id).
		// The file is 404 to both (its existence is not revealed).
		for _, tc := range []struct {
			c      *apitest.Client
			status int
			code   string
		}{{elsewhere, 403, wnms.LocationAccessDenied}, {foreign, 400, wnms.InvalidParameter}} {
			c := tc.c
			for _, call := range []struct{ method, path string }{
				{"GET", layoutsPath("", id)}, {"DELETE", layoutsPath("", id)}, {"GET", layoutsPath("/image", id)},
			} {
				layoutsExpectError(t, c.Do(call.method, call.path, nil), tc.status, tc.code, "")
			}
			layoutsExpectError(t, c.Do("POST", layoutsPath("", id), layoutsBody(id)), tc.status, tc.code, "")
			layoutsExpectError(t, c.Do("POST", layoutsPath("/image", id), layoutsFile(t, "a.png", layoutsPNG(t, 4, 4))), tc.status, tc.code, "")
			layoutsExpectError(t, c.Do("POST", layoutsPath("/spm", id), layoutsFile(t, "a.spm", []byte("x"))), tc.status, tc.code, "")
			layoutsExpectError(t, c.Do("GET", layoutsSfile(key), nil), 404, wnms.ResourceNotFound, "")
		}
		// The foreign customer works on its own floor, and the first
		// customer cannot see it.
		fid := w.ForeignFloor.ID.ID
		foreign.Expect(http.StatusNoContent, "POST", layoutsPath("", fid), layoutsBody(fid))
		layoutsExpectError(t, w.E.Admin.Do("GET", layoutsPath("", fid), nil), 400, wnms.InvalidParameter, "")
		// Nothing changed for the first floor's image.
		if got := layoutsGet(t, w.E.Admin, id); got.ImageKey == nil || *got.ImageKey != key {
			t.Errorf("image key %v, want %s", got.ImageKey, key)
		}
	})
}

// TestAuthzLayouts is the authorization matrix of the layout calls and
// sfiles.
func TestAuthzLayouts(t *testing.T) {
	withLayout := func(method, call string, body func(t *testing.T) any) func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
		return func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
			layoutsPut(t, f.E, tg.Floor.ID.ID)
			var b any
			if body != nil {
				b = body(t)
			}
			return method, layoutsPath(call, tg.Floor.ID.ID), b
		}
	}
	png := func(t *testing.T) any { return layoutsFile(t, "a.png", layoutsPNG(t, 4, 4)) }
	cases := []authzCase{
		{name: "GET layouts", allowed: allRoles, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter, request: withLayout("GET", "", nil)},
		{name: "POST layouts", allowed: allRoles, ok: 204, location: true, foreign: 400, foreignCode: wnms.InvalidParameter,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				return "POST", layoutsPath("", tg.Floor.ID.ID), layoutsBody(tg.Floor.ID.ID)
			}},
		{name: "DELETE layouts", allowed: opUp, ok: 204, location: true, foreign: 400, foreignCode: wnms.InvalidParameter, request: withLayout("DELETE", "", nil)},
		{name: "GET layouts/image", allowed: allRoles, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				layoutsPut(t, f.E, tg.Floor.ID.ID)
				layoutsAttach(t, f.E, tg.Floor.ID.ID)
				return "GET", layoutsPath("/image", tg.Floor.ID.ID), nil
			}},
		{name: "POST layouts/image", allowed: opUp, ok: 200, location: true, foreign: 400, foreignCode: wnms.InvalidParameter, request: withLayout("POST", "/image", png)},
		{name: "POST layouts/spm", allowed: opUp, ok: 204, location: true, foreign: 400, foreignCode: wnms.InvalidParameter,
			request: withLayout("POST", "/spm", func(t *testing.T) any { return layoutsFile(t, "a.spm", []byte("spm")) })},
		// sfiles hides files outside the caller's scope as not found; that
		// is checked in TestLayoutsScope.
		{name: "GET sfiles", allowed: allRoles, ok: 200, foreign: 404, foreignCode: wnms.ResourceNotFound,
			request: func(t *testing.T, f *authzFixture, tg authzTarget) (string, string, any) {
				layoutsPut(t, f.E, tg.Floor.ID.ID)
				return "GET", layoutsSfile(layoutsAttach(t, f.E, tg.Floor.ID.ID)), nil
			}},
	}
	runAuthz(t, cases)
}
