package analytics

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// zonesFuzzQuery is the query every fuzzed body is checked against.
var zonesFuzzQuery = zoneQuery{ServerID: 1, LocationID: 12, NodeType: "location"}

// encodeZoneChange writes a change back as a PUT body: a part the change
// writes is given (null when it clears), the others are left out.
func encodeZoneChange(ch zoneChange, q zoneQuery) ([]byte, error) {
	cfg := map[string]any{}
	rng := map[string]any{}
	if ch.Parts&wnms.ZoneLayoutPart != 0 {
		cfg["layout"] = ch.Layout
	}
	if ch.Parts&wnms.ZoneFootfallPart != 0 {
		rng["footfall"] = ch.Footfall
	}
	if ch.Parts&wnms.ZoneDwellTimePart != 0 {
		var d any // a nil list is JSON null
		if ch.DwellTime != nil {
			d = ch.DwellTime
		}
		rng["dwell_time"] = d
	}
	if len(rng) > 0 {
		cfg["range"] = rng
	}
	return json.Marshal(map[string]any{"server_id": q.ServerID, "location_id": q.LocationID, "node_type": q.NodeType, "config": cfg})
}

// checkZoneChange asserts the invariants of an accepted change.
func checkZoneChange(t *testing.T, ch zoneChange) {
	t.Helper()
	if ch.Parts&^(wnms.ZoneLayoutPart|wnms.ZoneFootfallPart|wnms.ZoneDwellTimePart) != 0 {
		t.Fatalf("unknown parts %b", ch.Parts)
	}
	if l := ch.Layout; l != nil {
		if ch.Parts&wnms.ZoneLayoutPart == 0 {
			t.Fatal("a layout outside the written parts")
		}
		for _, v := range []float64{l.Length, l.Width} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Fatalf("accepted layout %+v", *l)
			}
		}
		if l.Unit != wnms.UnitFeet && l.Unit != wnms.UnitMeter {
			t.Fatalf("accepted unit %q", l.Unit)
		}
	}
	if f := ch.Footfall; f != nil {
		if ch.Parts&wnms.ZoneFootfallPart == 0 {
			t.Fatal("a footfall outside the written parts")
		}
		if f.Min < 0 || f.Min > f.Max || f.Max > wnms.MaxFootfall {
			t.Fatalf("accepted footfall %+v", *f)
		}
	}
	if d := ch.DwellTime; d != nil {
		if ch.Parts&wnms.ZoneDwellTimePart == 0 {
			t.Fatal("a dwell_time outside the written parts")
		}
		if len(d) < 1 || len(d) > wnms.MaxDwellTimeEntries {
			t.Fatalf("accepted %d dwell_time values", len(d))
		}
		for i, v := range d {
			if v < 1 || v > wnms.MaxDwellTimeMinutes || (i > 0 && v <= d[i-1]) {
				t.Fatalf("accepted dwell_time %v", d)
			}
		}
	}
}

func FuzzZoneConfig(f *testing.F) {
	for _, s := range []string{
		`{"server_id":1,"location_id":12,"node_type":"location"}`,
		`{"server_id":"1","location_id":"12","node_type":"LOCATION","config":null}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"layout":{"length":10.5,"width":3,"unit":"meter"}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"layout":null,"range":{"footfall":null,"dwell_time":null}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"range":{"footfall":{"min":0,"max":10},"dwell_time":[5,15,30,60,120]}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"range":{"dwell_time":[1,1440]}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"range":{"dwell_time":[]}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"layout":{"length":1e400,"width":1,"unit":"FEET"}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"layout":{"length":-0,"width":1,"unit":"FEET"}}}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"range":{"footfall":{"min":5,"max":4}}}}`,
		`{"server_id":1.0,"location_id":12,"node_type":"location"}`,
		`{"server_id":" 1 ","location_id":12,"node_type":"zone"}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":"x"}`,
		`{"server_id":1,"location_id":12,"node_type":"location","config":{"range":[1]}}`,
		`{"server_id":1,"location_id":12,"node_type":"location"} {}`,
		`[{"server_id":1}]`,
		`null`,
		`{`,
		``,
		`{"Server_ID":1,"location_id":12,"node_type":"location","config":{"LAYOUT":{"length":1,"width":1,"unit":"feet"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ch, err := decodeZoneChange(body, zonesFuzzQuery)
		if err != nil {
			var e *wnms.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *wnms.Error", err)
			}
			if httpkit.Status(e.Code) != http.StatusBadRequest || (e.Code != wnms.InvalidRequestBody && e.Code != wnms.ValidationFailed) {
				t.Fatalf("error %s: status %d, want 400 INVALID_REQUEST_BODY or VALIDATION_FAILED", e.Code, httpkit.Status(e.Code))
			}
			if e.Message == "" {
				t.Fatalf("error %s without a message", e.Code)
			}
			return
		}
		checkZoneChange(t, ch)
		// The accepted change, written back, decodes to itself.
		again, err := encodeZoneChange(ch, zonesFuzzQuery)
		if err != nil {
			t.Fatal(err)
		}
		ch2, err := decodeZoneChange(again, zonesFuzzQuery)
		if err != nil {
			t.Fatalf("re-encoded change %s rejected: %v", again, err)
		}
		if diff := cmp.Diff(ch, ch2); diff != "" {
			t.Fatalf("round trip of %s (-first +second):\n%s", again, diff)
		}
		// The same body for another location is refused.
		other := zonesFuzzQuery
		other.LocationID++
		if _, err := decodeZoneChange(body, other); wnms.ErrorCode(err) != wnms.ValidationFailed {
			t.Fatalf("a body for location %d accepted for location %d (%v)", zonesFuzzQuery.LocationID, other.LocationID, err)
		}
	})
}
