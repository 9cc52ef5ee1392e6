package wnms

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Global policies (api.md §9). Both are global: created at the root location and
// kept once per customer.

// Policy types: the read-only policyType of each global policy.
const (
	SNMPPolicyType        = "SNMP_POLICY"
	HotspotSSIDPolicyType = "HOTSPOT_SSID_POLICY"
)

// SecretMask is what a client sees in place of a stored secret (a password,
// passphrase or community string, in policies and test profiles). A write
// that sends it back keeps the stored value.
const SecretMask = "********"

// Limits of the global policies (api.md §9).
const (
	MaxSNMPServers       = 64
	MaxHotspotSSIDs      = 1000
	MaxSSIDOctets        = 32
	DefaultTrapPort      = 162
	MinSNMPPassword      = 8
	MaxSNMPPassword      = 128
	MaxCommunityString   = 32
	MaxSNMPUserName      = 32
	MaxSNMPMibIIOctets   = 255
	MinEngineIDOctets    = 5
	MaxEngineIDOctets    = 32
	policyMaxEcho        = 40
	policyMaxHostOctets  = 253
	policyMaxLabelOctets = 63
)

// SNMPAuthProtocol is the authentication protocol of SNMPv3 (USM):
// authenticationProtocol of versionThreeSettings and authenticationType of
// a trap receiver.
type SNMPAuthProtocol string

// The SNMPv3 authentication protocols.
const (
	AuthNone   SNMPAuthProtocol = "NONE"
	AuthMD5    SNMPAuthProtocol = "MD5"
	AuthSHA    SNMPAuthProtocol = "SHA"
	AuthSHA224 SNMPAuthProtocol = "SHA224"
	AuthSHA256 SNMPAuthProtocol = "SHA256"
	AuthSHA384 SNMPAuthProtocol = "SHA384"
	AuthSHA512 SNMPAuthProtocol = "SHA512"
)

// SNMPAuthProtocols lists the accepted authentication protocols.
var SNMPAuthProtocols = []SNMPAuthProtocol{AuthNone, AuthMD5, AuthSHA, AuthSHA224, AuthSHA256, AuthSHA384, AuthSHA512}

// SNMPPrivProtocol is the privacy (encryption) protocol of SNMPv3.
type SNMPPrivProtocol string

// The SNMPv3 privacy protocols.
const (
	PrivNone   SNMPPrivProtocol = "NONE"
	PrivDES    SNMPPrivProtocol = "DES"
	PrivAES    SNMPPrivProtocol = "AES"
	PrivAES192 SNMPPrivProtocol = "AES192"
	PrivAES256 SNMPPrivProtocol = "AES256"
)

// SNMPPrivProtocols lists the accepted privacy protocols.
var SNMPPrivProtocols = []SNMPPrivProtocol{PrivNone, PrivDES, PrivAES, PrivAES192, PrivAES256}

// SNMPVersion is the protocol version of a trap receiver.
type SNMPVersion string

// The SNMP versions.
const (
	SNMPv1  SNMPVersion = "V1"
	SNMPv2c SNMPVersion = "V2C"
	SNMPv3  SNMPVersion = "V3"
)

// SNMPVersions lists the accepted protocol versions.
var SNMPVersions = []SNMPVersion{SNMPv1, SNMPv2c, SNMPv3}

// SNMPPolicy is the global SNMP policy of a customer: whether traps go out
// and to whom, and how the SNMP agent answers queries (api.md §9).
type SNMPPolicy struct {
	PolicyCreatedAtLocID   LocationID   `json:"policyCreatedAtLocId"`
	PolicyType             string       `json:"policyType"`
	SNMPIntegrationEnabled bool         `json:"snmpIntegrationEnabled"`
	SNMPSettings           SNMPSettings `json:"snmpSettings"`
	SNMPMib                SNMPMib      `json:"snmpMib"`
	SNMPServerList         []SNMPServer `json:"snmpServerlist"`
}

// SNMPSettings are the agent's access settings and the trap switch.
type SNMPSettings struct {
	VersionOneTwoSettings SNMPv12Settings `json:"versionOneTwoSettings"`
	VersionThreeSettings  SNMPv3Settings  `json:"versionThreeSettings"`
	// GetEnabled allows managers to query the agent; false blocks every MIB.
	GetEnabled bool `json:"getEnabled"`
	// TrapEnabled allows traps to the configured receivers.
	TrapEnabled bool `json:"trapEnabled"`
}

// SNMPv12Settings are the SNMPv1/v2c settings: queries allowed with the
// community, which is also the community of v1/v2c traps.
type SNMPv12Settings struct {
	EnableGets      bool   `json:"enableGets"`
	CommunityString string `json:"communityString"`
}

// SNMPv3Settings are the SNMPv3 (USM) settings of the agent; EngineID also
// identifies this server in v3 traps. An empty EngineID is not set.
type SNMPv3Settings struct {
	EnableGets             bool             `json:"enableGets"`
	UserName               string           `json:"userName"`
	AuthenticationPassword string           `json:"authenticationPassword"`
	PrivacyPassword        string           `json:"privacyPassword"`
	AuthenticationProtocol SNMPAuthProtocol `json:"authenticationProtocol"`
	PrivacyProtocol        SNMPPrivProtocol `json:"privacyProtocol"`
	EngineID               string           `json:"engineId"`
}

// SNMPMib are the MIB switches of the agent and the MIB-II system group.
type SNMPMib struct {
	SNMPMibII               SNMPMibII `json:"snmpMibII"`
	HostResourcesMibEnabled bool      `json:"hostResourcesMibEnabled"`
	InterfaceMibEnabled     bool      `json:"interfaceMibEnabled"`
	MibIIEnabled            bool      `json:"mibIIEnabled"`
	// VendorEnabled: whether external trap receivers receive traps.
	VendorEnabled bool `json:"vendorEnabled"`
}

// SNMPMibII is the MIB-II system group: sysName, sysContact, sysLocation.
type SNMPMibII struct {
	SystemName     string `json:"systemName"`
	SystemContact  string `json:"systemContact"`
	SystemLocation string `json:"systemLocation"`
}

// SNMPServer is a trap receiver. It is identified, for keeping masked
// secrets across a PUT, by DestIPAddress and TrapPort.
type SNMPServer struct {
	EnableTraps            bool             `json:"enableTraps"`
	TrapPort               int              `json:"trapPort"`
	ProtocolVersion        SNMPVersion      `json:"protocolVersion"`
	UserName               string           `json:"userName"`
	AuthenticationPassword string           `json:"authenticationPassword"`
	PrivacyPassword        string           `json:"privacyPassword"`
	AuthenticationType     SNMPAuthProtocol `json:"authenticationType"`
	PrivacyProtocol        SNMPPrivProtocol `json:"privacyProtocol"`
	DestIPAddress          string           `json:"destIpAddress"`
}

// HotspotSSIDPolicy is the global list of hotspot SSIDs of a customer.
type HotspotSSIDPolicy struct {
	PolicyCreatedAtLocID LocationID `json:"policyCreatedAtLocId"`
	PolicyType           string     `json:"policyType"`
	SSIDs                []string   `json:"ssids"`
}

// DefaultSNMPPolicy returns the built-in SNMP policy: integration, queries
// and traps off, the MIBs switched on for when queries are allowed, the
// v1/v2c community "public", no SNMPv3 user and no trap receivers.
func DefaultSNMPPolicy() *SNMPPolicy {
	return &SNMPPolicy{
		PolicyCreatedAtLocID: LocalID(RootLocation),
		PolicyType:           SNMPPolicyType,
		SNMPSettings: SNMPSettings{
			VersionOneTwoSettings: SNMPv12Settings{CommunityString: "public"},
			VersionThreeSettings:  SNMPv3Settings{AuthenticationProtocol: AuthNone, PrivacyProtocol: PrivNone},
		},
		SNMPMib: SNMPMib{
			SNMPMibII:               SNMPMibII{SystemName: "wnms"},
			HostResourcesMibEnabled: true,
			InterfaceMibEnabled:     true,
			MibIIEnabled:            true,
		},
		SNMPServerList: []SNMPServer{},
	}
}

// DefaultHotspotSSIDPolicy returns the built-in hotspot SSID policy: no SSIDs.
func DefaultHotspotSSIDPolicy() *HotspotSSIDPolicy {
	return &HotspotSSIDPolicy{PolicyCreatedAtLocID: LocalID(RootLocation), PolicyType: HotspotSSIDPolicyType, SSIDs: []string{}}
}

// Clone returns a deep copy of the policy.
func (p *SNMPPolicy) Clone() *SNMPPolicy {
	q := *p
	q.SNMPServerList = append([]SNMPServer{}, p.SNMPServerList...)
	return &q
}

// Masked returns a copy of the policy for a client: every non-empty secret
// (community string, passwords) replaced by SecretMask. An empty secret
// stays empty, so a client can tell that none is set.
func (p *SNMPPolicy) Masked() *SNMPPolicy {
	q := p.Clone()
	mask := func(s *string) {
		if *s != "" {
			*s = SecretMask
		}
	}
	mask(&q.SNMPSettings.VersionOneTwoSettings.CommunityString)
	mask(&q.SNMPSettings.VersionThreeSettings.AuthenticationPassword)
	mask(&q.SNMPSettings.VersionThreeSettings.PrivacyPassword)
	for i := range q.SNMPServerList {
		mask(&q.SNMPServerList[i].AuthenticationPassword)
		mask(&q.SNMPServerList[i].PrivacyPassword)
	}
	return q
}

// ParseSNMPPolicy decodes the body of a PUT of the SNMP policy and returns
// the policy to store: read-only fields checked, masked secrets replaced by
// those of stored (the policy in force; nil when there is none), defaults
// filled in and every field validated. Errors are *Error:
// INVALID_REQUEST_BODY for a body that is not a JSON object of the policy's
// shape or an unknown enum value, VALIDATION_FAILED for a field that breaks
// a rule (the message names the field, never a secret's value).
func ParseSNMPPolicy(body []byte, stored *SNMPPolicy) (*SNMPPolicy, error) {
	var p SNMPPolicy
	if err := DecodeJSONObject(body, &p); err != nil {
		return nil, err
	}
	if err := checkPolicyFields(body, []string{"policyType", "snmpIntegrationEnabled", "snmpSettings", "snmpMib", "snmpServerlist"},
		"policyCreatedAtLocId"); err != nil {
		return nil, err
	}
	if err := checkPolicyHeader(p.PolicyType, SNMPPolicyType, p.PolicyCreatedAtLocID); err != nil {
		return nil, err
	}
	p.PolicyType, p.PolicyCreatedAtLocID = SNMPPolicyType, LocalID(RootLocation)
	if err := p.unmask(stored); err != nil {
		return nil, err
	}
	p.normalize()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// unmask replaces each SecretMask by the stored secret it stands for. A
// receiver's secrets come from the stored receiver with the same
// destIpAddress and trapPort. A mask with nothing stored behind it is
// VALIDATION_FAILED.
func (p *SNMPPolicy) unmask(stored *SNMPPolicy) error {
	keep := func(field string, v, from *string, why string) error {
		if *v != SecretMask {
			return nil
		}
		if from == nil {
			return Invalid(field, "%s stands for a stored secret, but %s", SecretMask, why)
		}
		*v = *from
		return nil
	}
	const none = "no policy is stored"
	v12, v3 := &p.SNMPSettings.VersionOneTwoSettings, &p.SNMPSettings.VersionThreeSettings
	var community, authPass, privPass *string
	if stored != nil {
		community = &stored.SNMPSettings.VersionOneTwoSettings.CommunityString
		authPass = &stored.SNMPSettings.VersionThreeSettings.AuthenticationPassword
		privPass = &stored.SNMPSettings.VersionThreeSettings.PrivacyPassword
	}
	if err := keep("snmpSettings.versionOneTwoSettings.communityString", &v12.CommunityString, community, none); err != nil {
		return err
	}
	if err := keep("snmpSettings.versionThreeSettings.authenticationPassword", &v3.AuthenticationPassword, authPass, none); err != nil {
		return err
	}
	if err := keep("snmpSettings.versionThreeSettings.privacyPassword", &v3.PrivacyPassword, privPass, none); err != nil {
		return err
	}
	for i := range p.SNMPServerList {
		e := &p.SNMPServerList[i]
		if e.AuthenticationPassword != SecretMask && e.PrivacyPassword != SecretMask {
			continue
		}
		authPass, privPass = nil, nil
		if m := stored.receiver(e.key()); m != nil {
			authPass, privPass = &m.AuthenticationPassword, &m.PrivacyPassword
		}
		const why = "no stored receiver has this destIpAddress and trapPort"
		at := fmt.Sprintf("snmpServerlist[%d].", i)
		if err := keep(at+"authenticationPassword", &e.AuthenticationPassword, authPass, why); err != nil {
			return err
		}
		if err := keep(at+"privacyPassword", &e.PrivacyPassword, privPass, why); err != nil {
			return err
		}
	}
	return nil
}

// receiver returns the receiver with the given key, or nil; p may be nil.
func (p *SNMPPolicy) receiver(key string) *SNMPServer {
	if p == nil {
		return nil
	}
	for i := range p.SNMPServerList {
		if p.SNMPServerList[i].key() == key {
			return &p.SNMPServerList[i]
		}
	}
	return nil
}

// key identifies a receiver: its address (an IP in canonical form, a host
// name in lower case) and its port (0 counts as the default port).
func (e *SNMPServer) key() string {
	host := strings.TrimSuffix(strings.ToLower(e.DestIPAddress), ".")
	if a, err := netip.ParseAddr(e.DestIPAddress); err == nil {
		host = a.String()
	}
	port := e.TrapPort
	if port == 0 {
		port = DefaultTrapPort
	}
	return fmt.Sprintf("%s|%d", host, port)
}

// normalize fills in the defaults: absent protocols are NONE, an absent
// trapPort is 162, an absent list is empty.
func (p *SNMPPolicy) normalize() {
	v3 := &p.SNMPSettings.VersionThreeSettings
	if v3.AuthenticationProtocol == "" {
		v3.AuthenticationProtocol = AuthNone
	}
	if v3.PrivacyProtocol == "" {
		v3.PrivacyProtocol = PrivNone
	}
	if p.SNMPServerList == nil {
		p.SNMPServerList = []SNMPServer{}
	}
	for i := range p.SNMPServerList {
		e := &p.SNMPServerList[i]
		if e.TrapPort == 0 {
			e.TrapPort = DefaultTrapPort
		}
		if e.AuthenticationType == "" {
			e.AuthenticationType = AuthNone
		}
		if e.PrivacyProtocol == "" {
			e.PrivacyProtocol = PrivNone
		}
	}
}

// Validate checks every field of a complete policy (as ParseSNMPPolicy
// returns it, or as stored). An unknown enum value is
// INVALID_REQUEST_BODY; any other broken rule is VALIDATION_FAILED naming
// the field.
func (p *SNMPPolicy) Validate() error {
	if err := checkPolicyHeader(p.PolicyType, SNMPPolicyType, p.PolicyCreatedAtLocID); err != nil {
		return err
	}
	st := &p.SNMPSettings
	v12, v3 := &st.VersionOneTwoSettings, &st.VersionThreeSettings

	// Enums first: an unknown value means the body is not of the call's shape.
	if err := policyEnum("snmpSettings.versionThreeSettings.authenticationProtocol", v3.AuthenticationProtocol, SNMPAuthProtocols); err != nil {
		return err
	}
	if err := policyEnum("snmpSettings.versionThreeSettings.privacyProtocol", v3.PrivacyProtocol, SNMPPrivProtocols); err != nil {
		return err
	}
	for i := range p.SNMPServerList {
		e := &p.SNMPServerList[i]
		at := fmt.Sprintf("snmpServerlist[%d].", i)
		if e.ProtocolVersion == "" {
			return Invalid(at+"protocolVersion", "required: one of V1, V2C, V3")
		}
		if err := policyEnum(at+"protocolVersion", e.ProtocolVersion, SNMPVersions); err != nil {
			return err
		}
		if err := policyEnum(at+"authenticationType", e.AuthenticationType, SNMPAuthProtocols); err != nil {
			return err
		}
		if err := policyEnum(at+"privacyProtocol", e.PrivacyProtocol, SNMPPrivProtocols); err != nil {
			return err
		}
	}

	// SNMPv1/v2c: the community is needed for v1/v2c queries and traps.
	needCommunity := v12.EnableGets
	for _, e := range p.SNMPServerList {
		if e.EnableTraps && e.ProtocolVersion != SNMPv3 {
			needCommunity = true
		}
	}
	const community = "snmpSettings.versionOneTwoSettings.communityString"
	if v12.CommunityString == "" {
		if needCommunity {
			return Invalid(community, "required when SNMPv1/v2c queries or traps are enabled")
		}
	} else if len(v12.CommunityString) > MaxCommunityString || !policyPrintable(v12.CommunityString) {
		return Invalid(community, "must be 1 to %d printable ASCII characters", MaxCommunityString)
	}

	// SNMPv3 of the agent.
	if err := snmpUSM("snmpSettings.versionThreeSettings.", v3.EnableGets, v3.UserName, "authenticationProtocol",
		v3.AuthenticationProtocol, v3.AuthenticationPassword, v3.PrivacyProtocol, v3.PrivacyPassword); err != nil {
		return err
	}
	if err := snmpEngineID("snmpSettings.versionThreeSettings.engineId", v3.EngineID); err != nil {
		return err
	}

	// MIB-II system group: DisplayString (SIZE (0..255)).
	m := &p.SNMPMib.SNMPMibII
	for _, f := range []struct{ name, v string }{
		{"snmpMib.snmpMibII.systemName", m.SystemName},
		{"snmpMib.snmpMibII.systemContact", m.SystemContact},
		{"snmpMib.snmpMibII.systemLocation", m.SystemLocation},
	} {
		if err := CheckOctets(f.name, f.v, 0, MaxSNMPMibIIOctets); err != nil {
			return err
		}
	}

	// Trap receivers.
	if p.SNMPServerList == nil {
		return Invalid("snmpServerlist", "must be a list")
	}
	if len(p.SNMPServerList) > MaxSNMPServers {
		return Invalid("snmpServerlist", "at most %d receivers", MaxSNMPServers)
	}
	seen := map[string]int{}
	for i := range p.SNMPServerList {
		e := &p.SNMPServerList[i]
		at := fmt.Sprintf("snmpServerlist[%d].", i)
		if err := snmpHost(at+"destIpAddress", e.DestIPAddress); err != nil {
			return err
		}
		if e.TrapPort < 1 || e.TrapPort > 65535 {
			return Invalid(at+"trapPort", "must be 1 to 65535")
		}
		if j, dup := seen[e.key()]; dup {
			return Invalid(at+"destIpAddress", "the same receiver (destIpAddress and trapPort) as snmpServerlist[%d]", j)
		}
		seen[e.key()] = i
		if err := snmpUSM(at, e.ProtocolVersion == SNMPv3, e.UserName, "authenticationType",
			e.AuthenticationType, e.AuthenticationPassword, e.PrivacyProtocol, e.PrivacyPassword); err != nil {
			return err
		}
	}
	return nil
}

// snmpUSM checks SNMPv3 user-based security settings: the user name
// (required when used), the passwords of the protocols in use and that
// privacy comes with authentication.
func snmpUSM(at string, used bool, user, authField string, auth SNMPAuthProtocol, authPass string, priv SNMPPrivProtocol, privPass string) error {
	if used && user == "" {
		return Invalid(at+"userName", "required for SNMPv3")
	}
	if err := CheckOctets(at+"userName", user, 0, MaxSNMPUserName); err != nil {
		return err
	}
	if err := snmpSecret(at+"authenticationPassword", authPass, auth != AuthNone, "with authentication "+string(auth)); err != nil {
		return err
	}
	if priv != PrivNone && auth == AuthNone {
		return Invalid(at+"privacyProtocol", "privacy %s needs an authentication protocol (%s is NONE)", priv, authField)
	}
	return snmpSecret(at+"privacyPassword", privPass, priv != PrivNone, "with privacy "+string(priv))
}

// snmpSecret checks a password: MinSNMPPassword to MaxSNMPPassword
// characters when required, at most MaxSNMPPassword otherwise, and no
// control characters. The message never shows the value.
func snmpSecret(field, v string, required bool, why string) error {
	n := utf8.RuneCountInString(v)
	switch {
	case !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0:
		return Invalid(field, "must not contain control characters or invalid UTF-8")
	case required && n < MinSNMPPassword:
		return Invalid(field, "must be at least %d characters %s", MinSNMPPassword, why)
	case n > MaxSNMPPassword:
		return Invalid(field, "must be at most %d characters", MaxSNMPPassword)
	}
	return nil
}

// snmpEngineID checks an SNMP engine id: empty, or 5 to 32 octets written
// as hex digits with an optional 0x prefix.
func snmpEngineID(field, v string) error {
	if v == "" {
		return nil
	}
	h := v
	if len(h) >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
		h = h[2:]
	}
	if len(h)%2 != 0 || len(h) < 2*MinEngineIDOctets || len(h) > 2*MaxEngineIDOctets {
		return Invalid(field, "must be %d to %d octets in hex (an even number of %d to %d hex digits, optionally after 0x)",
			MinEngineIDOctets, MaxEngineIDOctets, 2*MinEngineIDOctets, 2*MaxEngineIDOctets)
	}
	for i := 0; i < len(h); i++ {
		if !policyIsHex(h[i]) {
			return Invalid(field, "must be hex digits (optionally after 0x)")
		}
	}
	return nil
}

func policyIsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// snmpHost checks a receiver address: an IPv4 or IPv6 literal (no zone)
// or an RFC 1123 host name whose last label is not all digits.
func snmpHost(field, v string) error {
	if v == "" {
		return Invalid(field, "required")
	}
	if a, err := netip.ParseAddr(v); err == nil {
		if a.Zone() != "" {
			return Invalid(field, "an IPv6 address must not carry a zone")
		}
		return nil
	}
	if !ValidHostName(v) {
		return Invalid(field, "must be an IPv4 or IPv6 address or a host name")
	}
	return nil
}

// ValidHostName reports whether s is an RFC 1123 host name: dot-separated
// labels of 1 to 63 letters, digits and hyphens, not starting or ending
// with a hyphen, at most 253 octets, an optional final dot, and a last
// label that is not all digits (so that it cannot be a mistyped IPv4).
func ValidHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > policyMaxHostOctets {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > policyMaxLabelOctets || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

// ParseHotspotSSIDPolicy decodes the body of a PUT of the hotspot SSID
// policy and returns the policy to store, validated. Errors are *Error:
// INVALID_REQUEST_BODY for a body that is not a JSON object of the
// policy's shape, VALIDATION_FAILED for a field that breaks a rule.
func ParseHotspotSSIDPolicy(body []byte) (*HotspotSSIDPolicy, error) {
	var p HotspotSSIDPolicy
	if err := DecodeJSONObject(body, &p); err != nil {
		return nil, err
	}
	if err := checkPolicyFields(body, []string{"policyType", "ssids"}, "policyCreatedAtLocId"); err != nil {
		return nil, err
	}
	if err := checkPolicyHeader(p.PolicyType, HotspotSSIDPolicyType, p.PolicyCreatedAtLocID); err != nil {
		return nil, err
	}
	p.PolicyType, p.PolicyCreatedAtLocID = HotspotSSIDPolicyType, LocalID(RootLocation)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks the policy: ssids present (an empty list clears them),
// at most MaxHotspotSSIDs, each 1 to 32 octets of valid UTF-8 without
// control characters, and no SSID twice (compared case-sensitively).
func (p *HotspotSSIDPolicy) Validate() error {
	if err := checkPolicyHeader(p.PolicyType, HotspotSSIDPolicyType, p.PolicyCreatedAtLocID); err != nil {
		return err
	}
	if p.SSIDs == nil {
		return Invalid("ssids", "required (an empty list clears the SSIDs)")
	}
	if len(p.SSIDs) > MaxHotspotSSIDs {
		return Invalid("ssids", "at most %d SSIDs", MaxHotspotSSIDs)
	}
	seen := make(map[string]int, len(p.SSIDs))
	for i, s := range p.SSIDs {
		field := fmt.Sprintf("ssids[%d]", i)
		if err := CheckOctets(field, s, 1, MaxSSIDOctets); err != nil {
			return err
		}
		if j, dup := seen[s]; dup {
			return Invalid(field, "duplicate of ssids[%d]", j)
		}
		seen[s] = i
	}
	return nil
}

// checkPolicyFields checks the top level of a policy PUT body: a PUT
// replaces the whole policy, so it must carry every field in required (a
// body such as {"bogus":1} would otherwise reset the policy to its
// defaults), and may carry nothing but those and optional. A missing field
// is VALIDATION_FAILED, an unknown one INVALID_REQUEST_BODY, each named.
func checkPolicyFields(body []byte, required []string, optional ...string) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return JSONError(err, "")
	}
	known := make(map[string]bool, len(required)+len(optional))
	for _, f := range optional {
		known[f] = true
	}
	for _, f := range required {
		known[f] = true
		if _, ok := top[f]; !ok {
			return Invalid(f, "required: a PUT replaces the whole policy")
		}
	}
	names := make([]string, 0, len(top))
	for f := range top {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if !known[f] {
			return &Error{Code: InvalidRequestBody, Message: fmt.Sprintf("unknown field %q", f), MoreInfo: f}
		}
	}
	return nil
}

// checkPolicyHeader checks the read-only fields of a global policy as a
// client sent them: policyType, if sent, must be the policy's own, and
// policyCreatedAtLocId, if sent, must be the root location where the
// global policy lives.
func checkPolicyHeader(gotType, wantType string, loc LocationID) error {
	if gotType != "" && gotType != wantType {
		return Invalid("policyType", "is read-only and must be %s", wantType)
	}
	if loc.ID != RootLocation || loc.ChildID != nil || (loc.Type != "" && !strings.EqualFold(loc.Type, LocalLocationID)) {
		return Invalid("policyCreatedAtLocId", "the global policy lives at the root location {\"type\":\"locallocationid\",\"id\":0}; updates must use that location")
	}
	return nil
}

// policyEnum reports an unknown enum value as INVALID_REQUEST_BODY.
func policyEnum[T ~string](field string, v T, allowed []T) error {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if v == a {
			return nil
		}
		names[i] = string(a)
	}
	return &Error{Code: InvalidRequestBody, MoreInfo: field,
		Message: fmt.Sprintf("%s: unknown value %.*q; one of %s", field, policyMaxEcho, string(v), strings.Join(names, ", "))}
}

func policyPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// SNMPCounts are the figures the SNMP agent answers in its status group:
// APs up and down, and active clients.
type SNMPCounts struct {
	APsUp, APsDown, Clients int64
}
