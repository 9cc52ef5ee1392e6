package wnms

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Template kinds: the only template type is the client connection test
// profile (api.md §10).
const (
	// ProfileTemplateType is the templateType of a profile and the
	// templateType segment of its paths.
	ProfileTemplateType = "CL_CONN_TEST_PROFILE"
	// ProfileType is the type field of a profile.
	ProfileType = "clientconntestprofile"
)

// Frequency bands: of a radio, a client sample, a profile and a baseline
// scope (BandAny: both).
const (
	Band24GHz = "BAND_2_4_GHZ"
	Band5GHz  = "BAND_5_GHZ"
	BandAny   = "ANY"
)

// BandOf is the band of a Wi-Fi channel: 1–14 are 2.4 GHz, the rest 5 GHz.
// Channel 0 is a record's whose radio is not known (a data source's
// record at no known AP): it has no band (""), and counts only where any
// band does.
func BandOf(channel int) string {
	if channel < 1 {
		return BandUnknown
	}
	if channel <= 14 {
		return Band24GHz
	}
	return Band5GHz
}

// BandUnknown is the band of channel 0, not known.
const BandUnknown = ""

// ProtocolOf is the protocol a client event or sample reports by default
// on a channel: BG on 2.4 GHz, A on 5 GHz, UNKNOWN when the channel is not
// known.
func ProtocolOf(channel int) string {
	switch BandOf(channel) {
	case Band24GHz:
		return "BG"
	case Band5GHz:
		return "A"
	}
	return "UNKNOWN"
}

// Security modes of a profile (api.md §10); 2 is not a mode.
const (
	SecurityOpen     = 0
	SecurityWEP      = 1
	SecurityWPA2     = 3
	SecurityWPAMixed = 4
	SecurityOSEN     = 5
)

// Security types of a profile: EAP is allowed only with WPA2 and WPA/WPA2.
const (
	SecurityPSK = 0
	SecurityEAP = 1
)

// Limits of a profile's fields.
const (
	MaxTemplateName = 64
	MaxPingServers  = 10
	MaxTemplateDesc = 1024
	MaxCredential   = 128
	MinPassphrase   = 8
	MaxPassphrase   = 63
	MaxWANTestURL   = 2048
	MaxProfileSSID  = 32 // octets
)

// Template is a client connection test profile. Secrets hold the stored
// values; Masked gives the copy a client may read.
type Template struct {
	Type                   string     `json:"type"`
	TemplateID             int64      `json:"templateId"`
	TemplateName           string     `json:"templateName"`
	CreatedAtLocationID    LocationID `json:"createdAtLocationId"`
	Description            string     `json:"description"`
	TemplateType           string     `json:"templateType"`
	MncTemplateID          int64      `json:"mncTemplateId"`
	SSID                   string     `json:"ssid"`
	FrequencyBand          string     `json:"frequencyBand"`
	SecurityMode           int        `json:"securityMode"`
	SecurityType           int        `json:"securityType"`
	Username               *string    `json:"username"`
	Password               *string    `json:"password"`
	Passphrase             *string    `json:"passphrase"`
	PingDestinationServers []string   `json:"pingDestinationServers"`
	WanTestURL             string     `json:"wanTestUrl"`
	PingTestEnabled        bool       `json:"pingTestEnabled"`
	MncTemplate            bool       `json:"mnctemplate"`

	// CustomerID owns the profile. LocationPath is the materialized path
	// of the location it was created at, as TemplateStore.Template reads
	// it (lists leave it empty).
	CustomerID   int64  `json:"-"`
	LocationPath string `json:"-"`
}

// NewTemplate returns a profile with the defaults of a create call.
func NewTemplate() Template {
	return Template{Type: ProfileType, TemplateType: ProfileTemplateType,
		FrequencyBand: BandAny, PingDestinationServers: []string{}}
}

// Masked returns a copy of t whose secrets read as SecretMask (a secret
// never set stays null).
func (t *Template) Masked() Template {
	m := *t
	m.Type, m.TemplateType = ProfileType, ProfileTemplateType
	mask := func(p *string) *string {
		if p == nil || *p == "" {
			return p
		}
		s := SecretMask
		return &s
	}
	m.Password, m.Passphrase = mask(t.Password), mask(t.Passphrase)
	if m.PingDestinationServers == nil {
		m.PingDestinationServers = []string{}
	}
	return m
}

// OptString is a JSON string field that tells "absent" (Set false) from
// null (Set true, Value nil) and a value.
type OptString struct {
	Set   bool
	Value *string
}

// UnmarshalJSON reads null or a string.
func (o *OptString) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Value = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	o.Value = &s
	return nil
}

// TemplateInput is the body of a create or edit call: each field is nil
// (or not Set) when the body does not send it.
type TemplateInput struct {
	Type                   *string     `json:"type"`
	TemplateID             *int64      `json:"templateId"`
	TemplateName           *string     `json:"templateName"`
	CreatedAtLocationID    *LocationID `json:"createdAtLocationId"`
	Description            *string     `json:"description"`
	TemplateType           *string     `json:"templateType"`
	MncTemplateID          *int64      `json:"mncTemplateId"`
	SSID                   *string     `json:"ssid"`
	FrequencyBand          *string     `json:"frequencyBand"`
	SecurityMode           *int        `json:"securityMode"`
	SecurityType           *int        `json:"securityType"`
	Username               OptString   `json:"username"`
	Password               OptString   `json:"password"`
	Passphrase             OptString   `json:"passphrase"`
	PingDestinationServers *[]string   `json:"pingDestinationServers"`
	WanTestURL             *string     `json:"wanTestUrl"`
	PingTestEnabled        *bool       `json:"pingTestEnabled"`
	MncTemplate            *bool       `json:"mnctemplate"`
}

// profileBadEnum is the INVALID_REQUEST_BODY error of an unknown enum value.
func profileBadEnum(field, format string, args ...any) *Error {
	e := Invalid(field, format, args...)
	e.Code = InvalidRequestBody
	return e
}

// Require fails with VALIDATION_FAILED naming the first of the given JSON
// fields that the body does not send (or sends as null).
func (in *TemplateInput) Require(fields ...string) error {
	for _, f := range fields {
		var present bool
		switch f {
		case "type":
			present = in.Type != nil
		case "templateId":
			present = in.TemplateID != nil
		case "templateName":
			present = in.TemplateName != nil
		case "createdAtLocationId":
			present = in.CreatedAtLocationID != nil
		case "ssid":
			present = in.SSID != nil
		case "frequencyBand":
			present = in.FrequencyBand != nil
		default:
			panic("wnms: Require of unknown field " + f)
		}
		if !present {
			return Invalid(f, "required")
		}
	}
	return nil
}

// ApplyTo copies the fields the body sends onto t, which holds the stored
// profile (or NewTemplate for a create). A secret sent as SecretMask keeps
// the stored value; sending the mask where nothing is stored is
// VALIDATION_FAILED. Unknown enum values are INVALID_REQUEST_BODY. The
// identity fields (templateId, createdAtLocationId) are the caller's to
// check; ApplyTo leaves them alone. Call Validate on the result.
func (in *TemplateInput) ApplyTo(t *Template) error {
	if in.Type != nil && !strings.EqualFold(*in.Type, ProfileType) {
		return profileBadEnum("type", "must be %s, not %q", ProfileType, *in.Type)
	}
	if in.TemplateType != nil && !strings.EqualFold(*in.TemplateType, ProfileTemplateType) {
		return profileBadEnum("templateType", "must be %s, not %q", ProfileTemplateType, *in.TemplateType)
	}
	if in.FrequencyBand != nil {
		switch b := strings.ToUpper(*in.FrequencyBand); b {
		case Band24GHz, Band5GHz, BandAny:
			t.FrequencyBand = b
		default:
			return profileBadEnum("frequencyBand", "must be %s, %s or %s, not %q", Band24GHz, Band5GHz, BandAny, *in.FrequencyBand)
		}
	}
	if in.SecurityMode != nil {
		switch m := *in.SecurityMode; m {
		case SecurityOpen, SecurityWEP, SecurityWPA2, SecurityWPAMixed, SecurityOSEN:
			t.SecurityMode = m
		default:
			return profileBadEnum("securityMode", "must be 0 (Open), 1 (WEP), 3 (WPA2), 4 (WPA/WPA2) or 5 (OSEN), not %d", m)
		}
	}
	if in.SecurityType != nil {
		switch st := *in.SecurityType; st {
		case SecurityPSK, SecurityEAP:
			t.SecurityType = st
		default:
			return profileBadEnum("securityType", "must be 0 (PSK) or 1 (EAP), not %d", st)
		}
	}
	t.Type, t.TemplateType = ProfileType, ProfileTemplateType
	if in.TemplateName != nil {
		t.TemplateName = strings.TrimSpace(*in.TemplateName)
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	if in.MncTemplateID != nil {
		t.MncTemplateID = *in.MncTemplateID
	}
	if in.SSID != nil {
		t.SSID = *in.SSID
	}
	if in.Username.Set {
		t.Username = in.Username.Value
	}
	for _, s := range []struct {
		field string
		in    OptString
		dst   **string
	}{{"password", in.Password, &t.Password}, {"passphrase", in.Passphrase, &t.Passphrase}} {
		if !s.in.Set {
			continue
		}
		if s.in.Value != nil && *s.in.Value == SecretMask {
			if *s.dst == nil || **s.dst == "" {
				return Invalid(s.field, "the mask %s stands for a stored value, and none is stored", SecretMask)
			}
			continue
		}
		*s.dst = s.in.Value
	}
	if in.PingDestinationServers != nil {
		t.PingDestinationServers = append([]string{}, (*in.PingDestinationServers)...)
	}
	if in.WanTestURL != nil {
		t.WanTestURL = strings.TrimSpace(*in.WanTestURL)
	}
	if in.PingTestEnabled != nil {
		t.PingTestEnabled = *in.PingTestEnabled
	}
	if in.MncTemplate != nil {
		t.MncTemplate = *in.MncTemplate
	}
	return nil
}

// Validate checks the rules of api.md §10 on a whole profile. Each
// broken rule is VALIDATION_FAILED naming the field; an unknown enum value
// is INVALID_REQUEST_BODY.
func (t *Template) Validate() error {
	if err := CheckText("templateName", t.TemplateName, 1, MaxTemplateName); err != nil {
		return err
	}
	if !utf8.ValidString(t.Description) || utf8.RuneCountInString(t.Description) > MaxTemplateDesc {
		return Invalid("description", "must be valid text of at most %d characters", MaxTemplateDesc)
	}
	if strings.IndexFunc(t.Description, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' }) >= 0 {
		return Invalid("description", "must not contain control characters")
	}
	if t.MncTemplateID < 0 {
		return Invalid("mncTemplateId", "must not be negative")
	}
	if n := len(t.SSID); n < 1 || n > MaxProfileSSID {
		if n == 0 {
			return Invalid("ssid", "required")
		}
		return Invalid("ssid", "must be 1-%d octets, not %d", MaxProfileSSID, n)
	}
	if !utf8.ValidString(t.SSID) {
		return Invalid("ssid", "must be valid UTF-8")
	}
	switch t.FrequencyBand {
	case Band24GHz, Band5GHz, BandAny:
	default:
		return profileBadEnum("frequencyBand", "must be %s, %s or %s", Band24GHz, Band5GHz, BandAny)
	}
	switch t.SecurityMode {
	case SecurityOpen, SecurityWEP, SecurityWPA2, SecurityWPAMixed, SecurityOSEN:
	default:
		return profileBadEnum("securityMode", "must be 0, 1, 3, 4 or 5")
	}
	switch t.SecurityType {
	case SecurityPSK:
	case SecurityEAP:
		if t.SecurityMode != SecurityWPA2 && t.SecurityMode != SecurityWPAMixed {
			return Invalid("securityType", "EAP (1) needs securityMode 3 (WPA2) or 4 (WPA/WPA2), not %d", t.SecurityMode)
		}
	default:
		return profileBadEnum("securityType", "must be 0 or 1")
	}
	if t.Username != nil {
		if err := CheckText("username", *t.Username, 0, MaxCredential); err != nil {
			return err
		}
	}
	if t.Password != nil {
		if err := CheckText("password", *t.Password, 0, MaxCredential); err != nil {
			return err
		}
	}
	if t.Passphrase != nil && *t.Passphrase != "" {
		if err := CheckText("passphrase", *t.Passphrase, MinPassphrase, MaxPassphrase); err != nil {
			return err
		}
	}
	keyed := t.SecurityMode == SecurityWEP || t.SecurityMode == SecurityWPA2 || t.SecurityMode == SecurityWPAMixed
	switch {
	case keyed && t.SecurityType == SecurityPSK:
		if t.Passphrase == nil || *t.Passphrase == "" {
			return Invalid("passphrase", "required with PSK security (%d-%d characters)", MinPassphrase, MaxPassphrase)
		}
	case t.SecurityType == SecurityEAP:
		if t.Username == nil || *t.Username == "" {
			return Invalid("username", "required with EAP security")
		}
		if t.Password == nil || *t.Password == "" {
			return Invalid("password", "required with EAP security")
		}
	}
	if len(t.PingDestinationServers) > MaxPingServers {
		return Invalid("pingDestinationServers", "at most %d servers, not %d", MaxPingServers, len(t.PingDestinationServers))
	}
	for i, h := range t.PingDestinationServers {
		if !ValidPingTarget(h) {
			return Invalid("pingDestinationServers", "entry %d (%q) is not a host name or IP address", i, h)
		}
	}
	if t.WanTestURL != "" {
		if !validProfileURL(t.WanTestURL) {
			return Invalid("wanTestUrl", "must be an http or https URL with a host")
		}
	}
	return nil
}

// ValidPingTarget reports whether s is an IPv4 or IPv6 literal or an RFC 1123
// host name: dot-separated labels of 1 to 63 letters, digits and hyphens,
// not starting or ending with a hyphen, at most 253 octets, an optional
// final dot, and a last label that is not all digits (a mistyped IPv4).
func ValidPingTarget(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

func validProfileURL(s string) bool {
	if len(s) > MaxWANTestURL || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return false
	}
	h := u.Hostname()
	return h != "" && ValidPingTarget(h)
}

// PathLocationIDs lists the ids of the locations on a materialized path
// ("/0/5/12/" → 0, 5, 12), from the root down.
func PathLocationIDs(path string) []int64 {
	var out []int64
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if n, err := strconv.ParseInt(seg, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// TemplateFilter selects profiles of one customer: those created at one of
// LocationIDs, or at or below one of the materialized paths in Subtrees.
// Offset and Limit page the result in id order; Limit 0 returns all.
type TemplateFilter struct {
	CustomerID  int64
	LocationIDs []int64
	Subtrees    []string
	Offset      int
	Limit       int
}

// TemplateStore keeps client connection test profiles. Profiles belong to
// a customer; a profile of another customer is RESOURCE_NOT_FOUND, and a
// name taken at the profile's location is DUPLICATE_ENTITY.
type TemplateStore interface {
	// Templates lists the profiles f selects in id order, and how many it
	// selects in all.
	Templates(ctx context.Context, f TemplateFilter) ([]Template, int, error)
	// Template reads one profile of the customer, with its secrets.
	Template(ctx context.Context, customerID, id int64) (*Template, error)
	// CreateTemplate stores a new profile and fills its TemplateID.
	CreateTemplate(ctx context.Context, t *Template) error
	// CopyTemplate stores t as a new profile, suffixing its name with
	// " (copy)", " (copy 2)", ... if needed to keep it unique at its
	// location, and fills its TemplateID and TemplateName.
	CopyTemplate(ctx context.Context, t *Template) error
	// EditTemplate replaces profile id by what edit makes of the stored
	// one, in one transaction; its id, customer and location never change.
	EditTemplate(ctx context.Context, customerID, id int64, edit func(old *Template) (*Template, error)) (*Template, error)
	// DeleteTemplate removes a profile.
	DeleteTemplate(ctx context.Context, customerID, id int64) error
}
