package telemetry

import (
	"context"
	"encoding/json"
	"net/netip"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// APGroups are the groups an AP may be in; managed APs are AUTHORIZED.
var APGroups = []string{"AUTHORIZED", "UNCATEGORIZED", "EXTERNAL", "ROGUE"}

// RadioProtocols are the 802.11 protocols a radio may name.
var RadioProtocols = []string{"A", "B", "BG", "N", "AC", "AX"}

// Limits of an AP record.
const (
	MaxAPName  = 64
	MaxAPText  = 128
	MaxRadios  = 16
	MaxSSIDLen = 32
	MaxChannel = 196
)

// APInput is an AP record as ingest takes it: the read shape, of which the
// server's own fields (boxId, activeStatus, upSince, lastSeen,
// dot11ACCapability) are ignored when sent back.
type APInput struct {
	Type                  *string          `json:"type"`
	MacAddress            *string          `json:"macaddress"`
	Name                  *string          `json:"name"`
	Model                 string           `json:"model"`
	IPAddress             string           `json:"ipAddress"`
	LocationID            *wnms.LocationID `json:"locationId"`
	SoftwareVersion       string           `json:"softwareVersion"`
	VendorName            string           `json:"vendorName"`
	DeviceCapability      int              `json:"deviceCapability"`
	APTemplateName        string           `json:"apTemplateName"`
	Placed                bool             `json:"placed"`
	NumAssocClients       *int             `json:"numAssocClients"`
	TroubleshootingStatus int              `json:"troubleshootingStatus"`
	Group                 *string          `json:"group"`
	Radios                []RadioInput     `json:"radios"`
	TxBytes               *int64           `json:"txBytes"`
	RxBytes               *int64           `json:"rxBytes"`
	Position              *PositionInput   `json:"position"`
}

// PositionInput is a position as ingest takes it: both coordinates are
// required.
type PositionInput struct {
	X *float64 `json:"x"`
	Y *float64 `json:"y"`
}

// MaxCoordinate bounds a position's coordinates.
const MaxCoordinate = 100_000

// check checks both coordinates and returns the position.
func (in *PositionInput) check() (*wnms.Position, error) {
	for _, c := range []struct {
		name string
		v    *float64
	}{{"position.x", in.X}, {"position.y", in.Y}} {
		if c.v == nil {
			return nil, wnms.Invalid(c.name, "required")
		}
		if *c.v < 0 || *c.v > MaxCoordinate {
			return nil, wnms.Invalid(c.name, "must be 0-%d (the layout's unit, from its top left corner), not %g", MaxCoordinate, *c.v)
		}
	}
	return &wnms.Position{X: *in.X, Y: *in.Y}, nil
}

// RadioInput is a radio of an ingested AP record.
type RadioInput struct {
	MacAddress      *string `json:"macaddress"`
	Protocol        string  `json:"protocol"`
	Channel         int     `json:"channel"`
	SSID            string  `json:"ssid"`
	FrequencyBand   string  `json:"frequencyBand"`
	NumAssocClients int     `json:"numAssocClients"`
	Active          *bool   `json:"active"`
}

// ParseAP decodes and checks one ingested AP record and returns the AP to
// store. The location is left for the caller to check against the
// ingesting key's scope; absent, it is the unknown location.
func ParseAP(raw json.RawMessage) (*wnms.AP, error) {
	var in APInput
	if err := decodeRecord(raw, &in); err != nil {
		return nil, err
	}
	return checkAP(&in)
}

// checkAP checks an AP record and returns the AP to store.
func checkAP(in *APInput) (*wnms.AP, error) {
	if in.Type != nil && *in.Type != "ap" {
		return nil, wnms.Invalid("type", "must be \"ap\"")
	}
	if in.MacAddress == nil {
		return nil, wnms.Invalid("macaddress", "required")
	}
	mac, ok := ParseMAC(*in.MacAddress)
	if !ok {
		return nil, wnms.Invalid("macaddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", *in.MacAddress)
	}
	a := &wnms.AP{MacAddress: mac, Name: mac, Model: in.Model, IPAddress: in.IPAddress,
		LocationID:      wnms.LocalID(wnms.UnknownLocation),
		SoftwareVersion: in.SoftwareVersion, VendorName: in.VendorName, DeviceCapability: in.DeviceCapability,
		APTemplateName: in.APTemplateName, Placed: in.Placed, TroubleshootingStatus: in.TroubleshootingStatus,
		Group: "AUTHORIZED"}
	if in.Name != nil {
		a.Name = *in.Name
	}
	if in.Position != nil {
		var err error
		if a.Position, err = in.Position.check(); err != nil {
			return nil, err
		}
	}
	if err := wnms.CheckText("name", a.Name, 1, MaxAPName); err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, v string }{{"model", a.Model}, {"softwareVersion", a.SoftwareVersion},
		{"vendorName", a.VendorName}, {"apTemplateName", a.APTemplateName}} {
		if err := wnms.CheckText(f.name, f.v, 0, MaxAPText); err != nil {
			return nil, err
		}
	}
	if a.IPAddress != "" {
		ip, err := netip.ParseAddr(a.IPAddress)
		if err != nil {
			return nil, wnms.Invalid("ipAddress", "%q is not an IPv4 or IPv6 address", a.IPAddress)
		}
		a.IPAddress = ip.String()
	}
	if in.LocationID != nil {
		if in.LocationID.Type != "" && in.LocationID.Type != wnms.LocalLocationID || in.LocationID.ChildID != nil {
			return nil, wnms.Invalid("locationId", "must be a %s of this server", wnms.LocalLocationID)
		}
		a.LocationID = wnms.LocalID(in.LocationID.ID)
	}
	if a.DeviceCapability < 0 || a.DeviceCapability > wnms.CapAll {
		return nil, wnms.Invalid("deviceCapability", "a bit mask of 1 (802.11n), 2 (802.11ac) and 4 (802.11ax): 0 to %d", wnms.CapAll)
	}
	for _, b := range []struct {
		name string
		v    *int64
	}{{"txBytes", in.TxBytes}, {"rxBytes", in.RxBytes}} {
		if b.v != nil && *b.v < 0 {
			return nil, wnms.Invalid(b.name, "must not be negative")
		}
	}
	a.TxBytes, a.RxBytes = in.TxBytes, in.RxBytes
	if a.TroubleshootingStatus < 0 {
		return nil, wnms.Invalid("troubleshootingStatus", "must not be negative")
	}
	if in.Group != nil {
		g, err := checkEnum("group", *in.Group, APGroups...)
		if err != nil {
			return nil, err
		}
		a.Group = g
	}
	if len(in.Radios) > MaxRadios {
		return nil, wnms.Invalid("radios", "at most %d radios", MaxRadios)
	}
	seen := map[string]bool{}
	total := 0
	for i, ri := range in.Radios {
		r, err := parseRadio(ri)
		if err != nil {
			if e, ok := err.(*wnms.Error); ok {
				at := "radios[" + strconv.Itoa(i) + "]."
				e.Message, e.MoreInfo = at+e.Message, at+e.MoreInfo
			}
			return nil, err
		}
		if seen[r.MacAddress] {
			return nil, wnms.Invalid("radios", "BSSID %s given twice", r.MacAddress)
		}
		seen[r.MacAddress] = true
		total += r.NumAssocClients
		a.Radios = append(a.Radios, r)
	}
	a.NumAssocClients = total
	if in.NumAssocClients != nil {
		if *in.NumAssocClients < 0 {
			return nil, wnms.Invalid("numAssocClients", "must not be negative")
		}
		a.NumAssocClients = *in.NumAssocClients
	}
	return a, nil
}

func parseRadio(in RadioInput) (wnms.Radio, error) {
	var r wnms.Radio
	if in.MacAddress == nil {
		return r, wnms.Invalid("macaddress", "required: the radio's BSSID")
	}
	bssid, ok := ParseMAC(*in.MacAddress)
	if !ok {
		return r, wnms.Invalid("macaddress", "%q is not a BSSID (six hex octets separated by ':' or '-')", *in.MacAddress)
	}
	r = wnms.Radio{MacAddress: bssid, Channel: in.Channel, SSID: in.SSID, NumAssocClients: in.NumAssocClients, Active: true}
	if in.Protocol != "" {
		p, err := checkEnum("protocol", in.Protocol, RadioProtocols...)
		if err != nil {
			return r, err
		}
		r.Protocol = p
	}
	if r.Channel < 1 || r.Channel > MaxChannel {
		return r, wnms.Invalid("channel", "must be 1 to %d", MaxChannel)
	}
	if err := wnms.CheckOctets("ssid", r.SSID, 0, MaxSSIDLen); err != nil {
		return r, err
	}
	r.FrequencyBand = wnms.BandOf(r.Channel)
	if in.FrequencyBand != "" {
		b, err := checkEnum("frequencyBand", in.FrequencyBand, wnms.Band24GHz, wnms.Band5GHz)
		if err != nil {
			return r, err
		}
		if b != r.FrequencyBand {
			return r, wnms.Invalid("frequencyBand", "channel %d is in %s, not %s", r.Channel, r.FrequencyBand, b)
		}
	}
	if r.NumAssocClients < 0 {
		return r, wnms.Invalid("numAssocClients", "must not be negative")
	}
	if in.Active != nil {
		r.Active = *in.Active
	}
	return r, nil
}

// PlaceAP sets where an AP the caller sees is on its floor's layout (in
// the layout's unit, from its top left corner), or takes it off the plan
// (in nil). Unlike an ingested record it is not a heartbeat: the AP's
// liveness, radios and inventory stay as they are.
func (s *Service) PlaceAP(ctx context.Context, c *wnms.Caller, boxID int64, in *PositionInput) (*wnms.Position, error) {
	var pos *wnms.Position
	if in != nil {
		var err error
		if pos, err = in.check(); err != nil {
			return nil, err
		}
	}
	if err := s.seesAP(ctx, c, boxID); err != nil {
		return nil, err
	}
	found, err := s.Store.PlaceAP(ctx, c.CustomerID(), boxID, pos)
	if err != nil {
		return nil, err
	}
	if !found { // deleted meanwhile
		return nil, wnms.NotFound("no AP %d", boxID)
	}
	return pos, nil
}

// seesAP is nil when AP boxID is one of the caller's customer at the
// caller's locations, else RESOURCE_NOT_FOUND: what the caller may not see
// looks like what does not exist.
func (s *Service) seesAP(ctx context.Context, c *wnms.Caller, boxID int64) error {
	byBox := wnms.Cond{Op: "=", Property: "boxid", Kind: wnms.FilterNumber, Values: []any{boxID}}
	aps, _, err := s.ListAPs(ctx, c, wnms.APQuery{Filter: &byBox, Limit: 1})
	if err != nil {
		return err
	}
	if len(aps) == 0 {
		return wnms.NotFound("no AP %d", boxID)
	}
	return nil
}
