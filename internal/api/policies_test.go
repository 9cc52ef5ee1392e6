package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

const (
	policiesSNMPPath    = "/V5/configuration/global/snmp"
	policiesHotspotPath = "/V5/configuration/global/hotspotssid"
)

// policiesFullSNMP is an SNMP policy with every field set away from the
// default: every switch on, every secret set, three receivers.
func policiesFullSNMP() *wnms.SNMPPolicy {
	return &wnms.SNMPPolicy{
		PolicyCreatedAtLocID:   wnms.LocalID(0),
		PolicyType:             wnms.SNMPPolicyType,
		SNMPIntegrationEnabled: true,
		SNMPSettings: wnms.SNMPSettings{
			VersionOneTwoSettings: wnms.SNMPv12Settings{EnableGets: true, CommunityString: "s3cret-comm"},
			VersionThreeSettings: wnms.SNMPv3Settings{EnableGets: true, UserName: "agentuser",
				AuthenticationPassword: "agent-auth-pw", PrivacyPassword: "agent-priv-pw",
				AuthenticationProtocol: wnms.AuthSHA256, PrivacyProtocol: wnms.PrivAES256,
				EngineID: "0x80001f8880c71100000000000001"},
			GetEnabled:  true,
			TrapEnabled: true,
		},
		SNMPMib: wnms.SNMPMib{
			SNMPMibII:               wnms.SNMPMibII{SystemName: "wnms-lab", SystemContact: "ops@example.com", SystemLocation: "Bâtiment 7, rack 3"},
			HostResourcesMibEnabled: true,
			InterfaceMibEnabled:     true,
			MibIIEnabled:            true,
			VendorEnabled:           true,
		},
		SNMPServerList: []wnms.SNMPServer{
			{EnableTraps: true, TrapPort: 1162, ProtocolVersion: wnms.SNMPv3, UserName: "trapuser",
				AuthenticationPassword: "trap-auth-1", PrivacyPassword: "trap-priv-1",
				AuthenticationType: wnms.AuthMD5, PrivacyProtocol: wnms.PrivDES, DestIPAddress: "192.0.2.10"},
			{EnableTraps: true, TrapPort: 162, ProtocolVersion: wnms.SNMPv2c,
				AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone, DestIPAddress: "nms.example.com"},
			{EnableTraps: true, TrapPort: 65535, ProtocolVersion: wnms.SNMPv3, UserName: "v6user",
				AuthenticationPassword: "trap-auth-2", PrivacyPassword: "",
				AuthenticationType: wnms.AuthSHA512, PrivacyProtocol: wnms.PrivNone, DestIPAddress: "2001:db8::1"},
		},
	}
}

// policiesFlippedSNMP is policiesFullSNMP with every switch off and every
// other value changed, so a PUT of one after the other changes every field.
func policiesFlippedSNMP() *wnms.SNMPPolicy {
	return &wnms.SNMPPolicy{
		PolicyCreatedAtLocID: wnms.LocalID(0),
		PolicyType:           wnms.SNMPPolicyType,
		SNMPSettings: wnms.SNMPSettings{
			VersionOneTwoSettings: wnms.SNMPv12Settings{CommunityString: "other"},
			VersionThreeSettings: wnms.SNMPv3Settings{UserName: "u2", AuthenticationPassword: "another-pw",
				AuthenticationProtocol: wnms.AuthSHA, PrivacyProtocol: wnms.PrivNone, EngineID: "DEADBEEF01"},
		},
		SNMPMib: wnms.SNMPMib{SNMPMibII: wnms.SNMPMibII{SystemName: "", SystemContact: "x", SystemLocation: strings.Repeat("L", 255)}},
		SNMPServerList: []wnms.SNMPServer{
			{TrapPort: 1, ProtocolVersion: wnms.SNMPv1, AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone,
				DestIPAddress: "10.0.0.1"},
		},
	}
}

func policiesGetSNMP(t *testing.T, c *apitest.Client, query string) *wnms.SNMPPolicy {
	t.Helper()
	var p wnms.SNMPPolicy
	c.Expect(http.StatusOK, "GET", policiesSNMPPath+query, nil).Decode(t, &p)
	return &p
}

func policiesGetHotspot(t *testing.T, c *apitest.Client, query string) *wnms.HotspotSSIDPolicy {
	t.Helper()
	var p wnms.HotspotSSIDPolicy
	c.Expect(http.StatusOK, "GET", policiesHotspotPath+query, nil).Decode(t, &p)
	return &p
}

func policiesStoredSNMP(t *testing.T, e *apitest.Env, customer int64) *wnms.SNMPPolicy {
	t.Helper()
	p, err := e.Store.SNMPPolicy(context.Background(), customer)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func policiesStoredHotspot(t *testing.T, e *apitest.Env, customer int64) *wnms.HotspotSSIDPolicy {
	t.Helper()
	p, err := e.Store.HotspotSSIDPolicy(context.Background(), customer)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func policiesDiff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

func TestPoliciesSNMPRoundTrip(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		def := wnms.DefaultSNMPPolicy()

		// Never set: the default, masked, both ways.
		policiesDiff(t, "GET before any PUT", def.Masked(), policiesGetSNMP(t, e.Admin, ""))
		policiesDiff(t, "GET isdefault=true", def.Masked(), policiesGetSNMP(t, e.Admin, "?isdefault=true"))
		policiesDiff(t, "GET isdefault=false", def.Masked(), policiesGetSNMP(t, e.Admin, "?isdefault=false&nodeid=0"))
		if got := policiesGetSNMP(t, e.Admin, ""); got.SNMPSettings.VersionOneTwoSettings.CommunityString != wnms.SecretMask {
			t.Errorf("default community shown as %q, want the mask", got.SNMPSettings.VersionOneTwoSettings.CommunityString)
		}
		policiesDiff(t, "stored before any PUT", def, policiesStoredSNMP(t, e, 1))

		// Every field set, then every field changed: each answer, each GET and
		// the store (secrets in clear) agree.
		for i, want := range []*wnms.SNMPPolicy{policiesFullSNMP(), policiesFlippedSNMP(), policiesFullSNMP()} {
			var put wnms.SNMPPolicy
			e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, want).Decode(t, &put)
			policiesDiff(t, fmt.Sprintf("PUT %d answer", i), want.Masked(), &put)
			policiesDiff(t, fmt.Sprintf("GET after PUT %d", i), want.Masked(), policiesGetSNMP(t, e.Admin, ""))
			policiesDiff(t, fmt.Sprintf("stored after PUT %d", i), want, policiesStoredSNMP(t, e, 1))
			policiesDiff(t, "isdefault=true after a PUT", def.Masked(), policiesGetSNMP(t, e.Admin, "?isdefault=true"))
		}
		// The answer never carries a secret.
		r := e.Admin.Expect(http.StatusOK, "GET", policiesSNMPPath, nil)
		for _, secret := range []string{"s3cret-comm", "agent-auth-pw", "agent-priv-pw", "trap-auth-1", "trap-priv-1", "trap-auth-2"} {
			if strings.Contains(string(r.Body), secret) {
				t.Errorf("GET shows the secret %q", secret)
			}
		}
		// Any version segment, any case; any role may read.
		var p wnms.SNMPPolicy
		e.Admin.Expect(http.StatusOK, "GET", "/v4/configuration/global/snmp", nil).Decode(t, &p)
		policiesDiff(t, "GET /v4", policiesFullSNMP().Masked(), &p)
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		policiesDiff(t, "GET as viewer", policiesFullSNMP().Masked(), policiesGetSNMP(t, viewer, ""))
	})
}

func TestPoliciesSNMPDefaultsFilled(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		// A minimal body: the top-level fields a PUT must carry, and inside
		// them absent fields take their zero values, protocols NONE, trapPort
		// 162, the location filled in.
		body := `{"policyType": "SNMP_POLICY", "snmpIntegrationEnabled": true, "snmpSettings": {}, "snmpMib": {}, "snmpServerlist": [
			{"enableTraps": true, "protocolVersion": "V3", "userName": "u", "destIpAddress": "trap.example.org."},
			{"protocolVersion": "V1", "destIpAddress": "192.0.2.1", "trapPort": 0}]}`
		want := &wnms.SNMPPolicy{
			PolicyCreatedAtLocID:   wnms.LocalID(0),
			PolicyType:             wnms.SNMPPolicyType,
			SNMPIntegrationEnabled: true,
			SNMPSettings: wnms.SNMPSettings{VersionThreeSettings: wnms.SNMPv3Settings{
				AuthenticationProtocol: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone}},
			SNMPServerList: []wnms.SNMPServer{
				{EnableTraps: true, TrapPort: 162, ProtocolVersion: wnms.SNMPv3, UserName: "u",
					AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone, DestIPAddress: "trap.example.org."},
				{TrapPort: 162, ProtocolVersion: wnms.SNMPv1, AuthenticationType: wnms.AuthNone,
					PrivacyProtocol: wnms.PrivNone, DestIPAddress: "192.0.2.1"},
			},
		}
		var got wnms.SNMPPolicy
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath+"?nodeid=0", body).Decode(t, &got)
		policiesDiff(t, "PUT of a minimal body", want, &got)
		policiesDiff(t, "stored", want, policiesStoredSNMP(t, e, 1))
		// A null list is an empty one; policyType and location may be sent.
		body = `{"policyType": "SNMP_POLICY", "policyCreatedAtLocId": {"type": "locallocationid", "id": 0}, "snmpIntegrationEnabled": true,
			"snmpSettings": {}, "snmpMib": {}, "snmpServerlist": null}`
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, body).Decode(t, &got)
		if got.SNMPServerList == nil || len(got.SNMPServerList) != 0 {
			t.Errorf("null list stored as %v, want []", got.SNMPServerList)
		}
	})
}

func TestPoliciesSNMPMask(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		full := policiesFullSNMP()

		// The default's community survives a round trip of its masked form.
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesGetSNMP(t, e.Admin, ""))
		policiesDiff(t, "default round trip", wnms.DefaultSNMPPolicy(), policiesStoredSNMP(t, e, 1))

		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, full)
		// Sending back what GET shows keeps every secret.
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesGetSNMP(t, e.Admin, ""))
		policiesDiff(t, "masked round trip", full, policiesStoredSNMP(t, e, 1))

		// Receivers are matched by destIpAddress and trapPort, not position;
		// a host name matches in any case; a new value replaces the secret.
		m := policiesGetSNMP(t, e.Admin, "")
		m.SNMPServerList[0], m.SNMPServerList[2] = m.SNMPServerList[2], m.SNMPServerList[0]
		m.SNMPServerList[1].DestIPAddress = "NMS.Example.COM"
		m.SNMPServerList[1].EnableTraps = false
		m.SNMPSettings.VersionThreeSettings.PrivacyPassword = "new-priv-pw"
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, m)
		want := policiesFullSNMP()
		want.SNMPServerList[0], want.SNMPServerList[2] = want.SNMPServerList[2], want.SNMPServerList[0]
		want.SNMPServerList[1].DestIPAddress = "NMS.Example.COM"
		want.SNMPServerList[1].EnableTraps = false
		want.SNMPSettings.VersionThreeSettings.PrivacyPassword = "new-priv-pw"
		policiesDiff(t, "reordered receivers", want, policiesStoredSNMP(t, e, 1))

		// A receiver whose address or port changed has no stored secret to
		// keep: the mask is refused and nothing changes.
		before := policiesStoredSNMP(t, e, 1)
		for _, change := range []func(s *wnms.SNMPServer){
			func(s *wnms.SNMPServer) { s.TrapPort = 2162 },
			func(s *wnms.SNMPServer) { s.DestIPAddress = "192.0.2.11" },
		} {
			m := policiesGetSNMP(t, e.Admin, "")
			change(&m.SNMPServerList[2])
			r := e.Admin.Expect(http.StatusBadRequest, "PUT", policiesSNMPPath, m)
			if r.ErrorCode() != wnms.ValidationFailed || !strings.Contains(string(r.Body), "snmpServerlist[2].authenticationPassword") {
				t.Errorf("mask of a moved receiver: %s", r.Body)
			}
			policiesDiff(t, "after a refused mask", before, policiesStoredSNMP(t, e, 1))
		}
		// Clearing a secret is allowed where its protocol is NONE.
		m = policiesGetSNMP(t, e.Admin, "")
		m.SNMPSettings.VersionThreeSettings.PrivacyProtocol = wnms.PrivNone
		m.SNMPSettings.VersionThreeSettings.PrivacyPassword = ""
		var got wnms.SNMPPolicy
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, m).Decode(t, &got)
		if got.SNMPSettings.VersionThreeSettings.PrivacyPassword != "" || got.SNMPSettings.VersionThreeSettings.AuthenticationPassword != wnms.SecretMask {
			t.Errorf("after clearing the privacy password: %+v", got.SNMPSettings.VersionThreeSettings)
		}
		// A mask that stands for an empty secret is an empty secret, which
		// its protocol may then refuse.
		m.SNMPSettings.VersionThreeSettings.PrivacyProtocol = wnms.PrivAES
		m.SNMPSettings.VersionThreeSettings.PrivacyPassword = wnms.SecretMask
		before = policiesStoredSNMP(t, e, 1)
		r := e.Admin.Expect(http.StatusBadRequest, "PUT", policiesSNMPPath, m)
		if r.ErrorCode() != wnms.ValidationFailed {
			t.Errorf("mask of an empty secret under AES: %s", r.Body)
		}
		policiesDiff(t, "after a refused PUT", before, policiesStoredSNMP(t, e, 1))
	})
}

// policiesBadSNMP is a rejected SNMP PUT: a change to the full policy (or
// a raw body), the error code and the field named in moreInfo.
type policiesBadSNMP struct {
	name   string
	change func(p *wnms.SNMPPolicy)
	raw    string
	code   string
	field  string
}

func policiesServer(i int, f func(s *wnms.SNMPServer)) func(p *wnms.SNMPPolicy) {
	return func(p *wnms.SNMPPolicy) { f(&p.SNMPServerList[i]) }
}

func policiesV3(f func(s *wnms.SNMPv3Settings)) func(p *wnms.SNMPPolicy) {
	return func(p *wnms.SNMPPolicy) { f(&p.SNMPSettings.VersionThreeSettings) }
}

var policiesBadSNMPCases = []policiesBadSNMP{
	// Read-only and global fields.
	{name: "policyType of another policy", change: func(p *wnms.SNMPPolicy) { p.PolicyType = wnms.HotspotSSIDPolicyType }, code: wnms.ValidationFailed, field: "policyType"},
	{name: "policyType lower case", change: func(p *wnms.SNMPPolicy) { p.PolicyType = "snmp_policy" }, code: wnms.ValidationFailed, field: "policyType"},
	{name: "location not root", change: func(p *wnms.SNMPPolicy) { p.PolicyCreatedAtLocID = wnms.LocalID(5) }, code: wnms.ValidationFailed, field: "policyCreatedAtLocId"},
	{name: "unknown location", change: func(p *wnms.SNMPPolicy) { p.PolicyCreatedAtLocID = wnms.LocalID(-1) }, code: wnms.ValidationFailed, field: "policyCreatedAtLocId"},
	{name: "remote location id", change: func(p *wnms.SNMPPolicy) {
		p.PolicyCreatedAtLocID = wnms.LocationID{Type: wnms.RemoteLocationID, ID: 0}
	}, code: wnms.ValidationFailed, field: "policyCreatedAtLocId"},
	// Enums.
	{name: "unknown auth protocol", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.AuthenticationProtocol = "MD4" }), code: wnms.InvalidRequestBody, field: "snmpSettings.versionThreeSettings.authenticationProtocol"},
	{name: "unknown privacy protocol", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.PrivacyProtocol = "3DES" }), code: wnms.InvalidRequestBody, field: "snmpSettings.versionThreeSettings.privacyProtocol"},
	{name: "receiver version V2", change: policiesServer(1, func(s *wnms.SNMPServer) { s.ProtocolVersion = "V2" }), code: wnms.InvalidRequestBody, field: "snmpServerlist[1].protocolVersion"},
	{name: "receiver version missing", change: policiesServer(1, func(s *wnms.SNMPServer) { s.ProtocolVersion = "" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].protocolVersion"},
	{name: "receiver auth type lower case", change: policiesServer(0, func(s *wnms.SNMPServer) { s.AuthenticationType = "md5" }), code: wnms.InvalidRequestBody, field: "snmpServerlist[0].authenticationType"},
	{name: "receiver privacy AES128", change: policiesServer(0, func(s *wnms.SNMPServer) { s.PrivacyProtocol = "AES128" }), code: wnms.InvalidRequestBody, field: "snmpServerlist[0].privacyProtocol"},
	// SNMPv3 of the agent.
	{name: "auth password short", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.AuthenticationPassword = "1234567" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.authenticationPassword"},
	{name: "auth password empty", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.AuthenticationPassword = "" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.authenticationPassword"},
	{name: "auth password long", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.AuthenticationPassword = strings.Repeat("p", 129) }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.authenticationPassword"},
	{name: "auth password control char", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.AuthenticationPassword = "password\n1" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.authenticationPassword"},
	{name: "privacy password short", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.PrivacyPassword = "short" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.privacyPassword"},
	{name: "privacy without auth", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.AuthenticationProtocol = wnms.AuthNone }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.privacyProtocol"},
	{name: "v3 gets without user", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.UserName = "" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.userName"},
	{name: "v3 user 33 octets", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.UserName = strings.Repeat("u", 33) }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.userName"},
	{name: "v3 user 32 chars 33 octets", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.UserName = strings.Repeat("u", 31) + "é" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.userName"},
	{name: "engine id 4 octets", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "0x01020304" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.engineId"},
	{name: "engine id 33 octets", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = strings.Repeat("ab", 33) }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.engineId"},
	{name: "engine id odd digits", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "0102030405f" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.engineId"},
	{name: "engine id not hex", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "0x0102030405zz" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.engineId"},
	{name: "engine id bare 0x", change: policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "0x" }), code: wnms.ValidationFailed, field: "snmpSettings.versionThreeSettings.engineId"},
	// SNMPv1/v2c.
	{name: "community empty with v1/v2c gets", change: func(p *wnms.SNMPPolicy) {
		p.SNMPSettings.VersionOneTwoSettings.CommunityString = ""
		p.SNMPServerList = p.SNMPServerList[:1]
	}, code: wnms.ValidationFailed, field: "snmpSettings.versionOneTwoSettings.communityString"},
	{name: "community empty with a v2c receiver", change: func(p *wnms.SNMPPolicy) {
		p.SNMPSettings.VersionOneTwoSettings = wnms.SNMPv12Settings{}
	}, code: wnms.ValidationFailed, field: "snmpSettings.versionOneTwoSettings.communityString"},
	{name: "community 33 chars", change: func(p *wnms.SNMPPolicy) {
		p.SNMPSettings.VersionOneTwoSettings.CommunityString = strings.Repeat("c", 33)
	}, code: wnms.ValidationFailed, field: "snmpSettings.versionOneTwoSettings.communityString"},
	{name: "community not ASCII", change: func(p *wnms.SNMPPolicy) { p.SNMPSettings.VersionOneTwoSettings.CommunityString = "gemeinschäft" }, code: wnms.ValidationFailed, field: "snmpSettings.versionOneTwoSettings.communityString"},
	{name: "community tab", change: func(p *wnms.SNMPPolicy) { p.SNMPSettings.VersionOneTwoSettings.CommunityString = "a\tb" }, code: wnms.ValidationFailed, field: "snmpSettings.versionOneTwoSettings.communityString"},
	// MIB-II.
	{name: "systemName 256 octets", change: func(p *wnms.SNMPPolicy) { p.SNMPMib.SNMPMibII.SystemName = strings.Repeat("n", 256) }, code: wnms.ValidationFailed, field: "snmpMib.snmpMibII.systemName"},
	{name: "systemContact 128 chars 256 octets", change: func(p *wnms.SNMPPolicy) { p.SNMPMib.SNMPMibII.SystemContact = strings.Repeat("ä", 128) }, code: wnms.ValidationFailed, field: "snmpMib.snmpMibII.systemContact"},
	{name: "systemLocation newline", change: func(p *wnms.SNMPPolicy) { p.SNMPMib.SNMPMibII.SystemLocation = "a\nb" }, code: wnms.ValidationFailed, field: "snmpMib.snmpMibII.systemLocation"},
	// Receivers.
	{name: "trapPort 65536", change: policiesServer(0, func(s *wnms.SNMPServer) { s.TrapPort = 65536 }), code: wnms.ValidationFailed, field: "snmpServerlist[0].trapPort"},
	{name: "trapPort negative", change: policiesServer(0, func(s *wnms.SNMPServer) { s.TrapPort = -1 }), code: wnms.ValidationFailed, field: "snmpServerlist[0].trapPort"},
	{name: "destIpAddress empty", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress with space", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "nms example.com" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress bad IPv4", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "192.0.2.300" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress leading hyphen", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "-nms.example.com" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress label 64", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = strings.Repeat("a", 64) + ".example.com" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress 254 octets", change: policiesServer(1, func(s *wnms.SNMPServer) {
		s.DestIPAddress = strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("b", 62)
	}), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress numeric last label", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "nms.example.123" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress with zone", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "fe80::1%eth0" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress bracketed", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "[2001:db8::2]" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "destIpAddress URL", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "udp://nms.example.com" }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "duplicate receiver", change: policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress, s.TrapPort = "192.0.2.10", 1162 }), code: wnms.ValidationFailed, field: "snmpServerlist[1].destIpAddress"},
	{name: "duplicate receiver by default port", change: func(p *wnms.SNMPPolicy) {
		p.SNMPServerList = append(p.SNMPServerList, p.SNMPServerList[1])
		p.SNMPServerList[3].TrapPort = 0
		p.SNMPServerList[3].DestIPAddress = "nms.EXAMPLE.com."
	}, code: wnms.ValidationFailed, field: "snmpServerlist[3].destIpAddress"},
	{name: "65 receivers", change: func(p *wnms.SNMPPolicy) {
		p.SNMPServerList = nil
		for i := 0; i <= wnms.MaxSNMPServers; i++ {
			p.SNMPServerList = append(p.SNMPServerList, wnms.SNMPServer{ProtocolVersion: wnms.SNMPv2c, DestIPAddress: fmt.Sprintf("10.0.0.%d", i+1)})
		}
	}, code: wnms.ValidationFailed, field: "snmpServerlist"},
	{name: "v3 receiver without user", change: policiesServer(0, func(s *wnms.SNMPServer) { s.UserName = "" }), code: wnms.ValidationFailed, field: "snmpServerlist[0].userName"},
	{name: "receiver auth password short", change: policiesServer(0, func(s *wnms.SNMPServer) { s.AuthenticationPassword = "2short" }), code: wnms.ValidationFailed, field: "snmpServerlist[0].authenticationPassword"},
	{name: "receiver privacy password short", change: policiesServer(0, func(s *wnms.SNMPServer) { s.PrivacyPassword = "2short" }), code: wnms.ValidationFailed, field: "snmpServerlist[0].privacyPassword"},
	{name: "receiver privacy without auth", change: policiesServer(0, func(s *wnms.SNMPServer) { s.AuthenticationType = wnms.AuthNone }), code: wnms.ValidationFailed, field: "snmpServerlist[0].privacyProtocol"},
	{name: "mask of a new receiver", change: func(p *wnms.SNMPPolicy) {
		p.SNMPServerList = append(p.SNMPServerList, wnms.SNMPServer{ProtocolVersion: wnms.SNMPv3, UserName: "x",
			AuthenticationType: wnms.AuthSHA, AuthenticationPassword: wnms.SecretMask, DestIPAddress: "198.51.100.7"})
	}, code: wnms.ValidationFailed, field: "snmpServerlist[3].authenticationPassword"},
	// Bodies that are not a policy.
	{name: "not JSON", raw: `{"snmpIntegrationEnabled": tru`, code: wnms.InvalidRequestBody},
	{name: "empty body", raw: ` `, code: wnms.InvalidRequestBody},
	{name: "JSON null", raw: `null`, code: wnms.InvalidRequestBody},
	{name: "JSON array", raw: `[{}]`, code: wnms.InvalidRequestBody},
	{name: "two values", raw: `{} {}`, code: wnms.InvalidRequestBody},
	{name: "boolean as string", raw: `{"snmpIntegrationEnabled": "yes"}`, code: wnms.InvalidRequestBody, field: "snmpIntegrationEnabled"},
	{name: "trapPort as string", raw: `{"snmpServerlist": [{"protocolVersion": "V1", "destIpAddress": "10.0.0.1", "trapPort": "162"}]}`, code: wnms.InvalidRequestBody, field: "snmpServerlist.trapPort"},
	{name: "trapPort fractional", raw: `{"snmpServerlist": [{"protocolVersion": "V1", "destIpAddress": "10.0.0.1", "trapPort": 162.5}]}`, code: wnms.InvalidRequestBody},
	{name: "settings not an object", raw: `{"snmpSettings": "on"}`, code: wnms.InvalidRequestBody, field: "snmpSettings"},
	{name: "list not a list", raw: `{"snmpServerlist": {}}`, code: wnms.InvalidRequestBody, field: "snmpServerlist"},
	{name: "policyType not a string", raw: `{"policyType": 1}`, code: wnms.InvalidRequestBody, field: "policyType"},
	{name: "location id not a number", raw: `{"policyCreatedAtLocId": {"type": "locallocationid", "id": "0"}}`, code: wnms.InvalidRequestBody},
}

func TestPoliciesSNMPValidation(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
		stored := policiesStoredSNMP(t, e, 1)
		shown := policiesGetSNMP(t, e.Admin, "")
		for _, tc := range policiesBadSNMPCases {
			t.Run(tc.name, func(t *testing.T) {
				var body any = tc.raw
				if tc.change != nil {
					p := policiesFullSNMP()
					tc.change(p)
					body = p
				}
				r := e.Admin.Expect(http.StatusBadRequest, "PUT", policiesSNMPPath, body)
				if r.ErrorCode() != tc.code {
					t.Errorf("error code %s, want %s; %s", r.ErrorCode(), tc.code, r.Body)
				}
				if tc.field != "" && !strings.Contains(r.MoreInfo(), tc.field) {
					t.Errorf("moreInfo %q does not name %s; %s", r.MoreInfo(), tc.field, r.Body)
				}
				for _, secret := range []string{"agent-auth-pw", "agent-priv-pw", "trap-auth-1", "trap-priv-1", "s3cret-comm", "1234567", "2short"} {
					if strings.Contains(string(r.Body), secret) {
						t.Errorf("the error shows the secret %q: %s", secret, r.Body)
					}
				}
				policiesDiff(t, "GET after a refused PUT", shown, policiesGetSNMP(t, e.Admin, ""))
				policiesDiff(t, "stored after a refused PUT", stored, policiesStoredSNMP(t, e, 1))
			})
		}
	})
}

func TestPoliciesSNMPEdgeValues(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		for _, tc := range []struct {
			name   string
			change func(p *wnms.SNMPPolicy)
		}{
			{"engine id 5 octets", policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "0102030405" })},
			{"engine id 32 octets with 0X", policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "0X" + strings.Repeat("aB", 32) })},
			{"engine id empty", policiesV3(func(s *wnms.SNMPv3Settings) { s.EngineID = "" })},
			{"passwords 8 and 128", policiesV3(func(s *wnms.SNMPv3Settings) {
				s.AuthenticationPassword, s.PrivacyPassword = "12345678", strings.Repeat("p", 128)
			})},
			{"community 32 printable", func(p *wnms.SNMPPolicy) {
				p.SNMPSettings.VersionOneTwoSettings.CommunityString = " !\"#$%&'()*+,-./0123456789:;<=>?"
			}},
			{"user 32 octets", policiesV3(func(s *wnms.SNMPv3Settings) { s.UserName = strings.Repeat("u", 32) })},
			{"MIB-II 255 octets", func(p *wnms.SNMPPolicy) { p.SNMPMib.SNMPMibII.SystemName = strings.Repeat("n", 255) }},
			{"no community without v1/v2c", func(p *wnms.SNMPPolicy) {
				p.SNMPSettings.VersionOneTwoSettings = wnms.SNMPv12Settings{}
				p.SNMPServerList[1].EnableTraps = false
			}},
			{"64 receivers", func(p *wnms.SNMPPolicy) {
				p.SNMPServerList = nil
				for i := 0; i < wnms.MaxSNMPServers; i++ {
					p.SNMPServerList = append(p.SNMPServerList, wnms.SNMPServer{TrapPort: 162 + i, ProtocolVersion: wnms.SNMPv2c,
						AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone, DestIPAddress: "nms.example.com"})
				}
			}},
			{"same host other ports", policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress, s.TrapPort = "192.0.2.10", 162 })},
			{"IPv4-mapped IPv6", policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "::ffff:192.0.2.1" })},
			{"single-label host", policiesServer(1, func(s *wnms.SNMPServer) { s.DestIPAddress = "nms" })},
			{"host 253 octets", policiesServer(1, func(s *wnms.SNMPServer) {
				s.DestIPAddress = strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("b", 61) + "."
			})},
			{"every auth and privacy protocol", func(p *wnms.SNMPPolicy) {
				p.SNMPServerList = nil
				port := 1000
				for _, a := range wnms.SNMPAuthProtocols[1:] {
					for _, pr := range wnms.SNMPPrivProtocols {
						port++
						p.SNMPServerList = append(p.SNMPServerList, wnms.SNMPServer{TrapPort: port, ProtocolVersion: wnms.SNMPv3,
							UserName: "u", AuthenticationType: a, AuthenticationPassword: "auth-pass", PrivacyProtocol: pr,
							PrivacyPassword: map[bool]string{true: "", false: "priv-pass"}[pr == wnms.PrivNone], DestIPAddress: "10.1.1.1"})
					}
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := policiesFullSNMP()
				tc.change(p)
				var got wnms.SNMPPolicy
				e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, p).Decode(t, &got)
				policiesDiff(t, "answer", p.Masked(), &got)
				policiesDiff(t, "stored", p, policiesStoredSNMP(t, e, 1))
			})
		}
	})
}

func TestPoliciesNodeAndParams(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
		e.Admin.Expect(http.StatusOK, "PUT", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"Guest"}})
		snmp, hotspot := policiesStoredSNMP(t, e, 1), policiesStoredHotspot(t, e, 1)
		for _, tc := range []struct {
			method, path string
			body         any
			param        string
		}{
			{"GET", policiesSNMPPath + "?nodeid=3", nil, "nodeid"},
			{"GET", policiesSNMPPath + "?nodeid=-1", nil, "nodeid"},
			{"GET", policiesSNMPPath + "?nodeid=one", nil, "nodeid"},
			{"GET", policiesSNMPPath + "?isdefault=maybe", nil, "isdefault"},
			{"PUT", policiesSNMPPath + "?nodeid=2", policiesFlippedSNMP(), "nodeid"},
			{"PUT", policiesSNMPPath + "?nodeid=x", policiesFlippedSNMP(), "nodeid"},
			{"GET", policiesHotspotPath + "?isdefault=2", nil, "isdefault"},
			{"GET", policiesHotspotPath + "?nodeid=7", nil, "nodeid"},
			{"PUT", policiesHotspotPath + "?nodeid=7", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{}}, "nodeid"},
		} {
			r := e.Admin.Expect(http.StatusBadRequest, tc.method, tc.path, tc.body)
			if r.ErrorCode() != wnms.InvalidParameter || r.MoreInfo() != tc.param {
				t.Errorf("%s %s: %s", tc.method, tc.path, r.Body)
			}
		}
		policiesDiff(t, "SNMP after refused calls", snmp, policiesStoredSNMP(t, e, 1))
		policiesDiff(t, "hotspot after refused calls", hotspot, policiesStoredHotspot(t, e, 1))
		// nodeid=0 is this server; quoted values are accepted.
		policiesDiff(t, "nodeid=0", snmp.Masked(), policiesGetSNMP(t, e.Admin, `?nodeid=0&isdefault="false"`))
		policiesDiff(t, "hotspot nodeid=0", hotspot, policiesGetHotspot(t, e.Admin, "?nodeid=0&isdefault=FALSE"))

		// Content type and size.
		r := e.Admin.Expect(http.StatusUnsupportedMediaType, "PUT", policiesSNMPPath, apitest.Raw{ContentType: "text/plain", Body: []byte("{}")})
		if r.ErrorCode() != wnms.UnsupportedMediaType {
			t.Errorf("text/plain body: %s", r.Body)
		}
		e.Admin.Expect(http.StatusUnsupportedMediaType, "PUT", policiesHotspotPath, apitest.Raw{ContentType: "application/xml", Body: []byte("<ssids/>")})
		big := `{"policyType": "HOTSPOT_SSID_POLICY", "ssids": ["` + strings.Repeat("a", 1<<20) + `"]}`
		if r := e.Admin.Expect(http.StatusRequestEntityTooLarge, "PUT", policiesHotspotPath, big); r.ErrorCode() != wnms.PayloadTooLarge {
			t.Errorf("big body: %s", r.ErrorCode())
		}
		bigSNMP := `{"snmpMib": {"snmpMibII": {"systemName": "` + strings.Repeat("a", 1<<20) + `"}}}`
		e.Admin.Expect(http.StatusRequestEntityTooLarge, "PUT", policiesSNMPPath, bigSNMP)
		policiesDiff(t, "SNMP after refused bodies", snmp, policiesStoredSNMP(t, e, 1))
		policiesDiff(t, "hotspot after refused bodies", hotspot, policiesStoredHotspot(t, e, 1))
		// The testtrap call is not part of this area; the policy paths admit
		// no other method.
		r = e.Admin.Expect(http.StatusMethodNotAllowed, "POST", policiesSNMPPath, map[string]any{})
		if allow := r.Header.Get("Allow"); allow != "GET, PUT" {
			t.Errorf("Allow %q, want GET, PUT", allow)
		}
		e.Admin.Expect(http.StatusMethodNotAllowed, "DELETE", policiesHotspotPath, nil)
	})
}

func TestPoliciesHotspot(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		def := wnms.DefaultHotspotSSIDPolicy()
		policiesDiff(t, "GET before any PUT", def, policiesGetHotspot(t, e.Admin, ""))
		policiesDiff(t, "GET isdefault", def, policiesGetHotspot(t, e.Admin, "?isdefault=true"))
		if r := e.Admin.Expect(http.StatusOK, "GET", policiesHotspotPath, nil); !strings.Contains(string(r.Body), `"ssids":[]`) {
			t.Errorf("empty ssids not shown as []: %s", r.Body)
		}

		thousand := make([]string, wnms.MaxHotspotSSIDs)
		for i := range thousand {
			thousand[i] = fmt.Sprintf("ssid-%04d", i)
		}
		for _, ssids := range [][]string{
			{"Guest", "guest", "GUEST"}, // case-sensitive: three SSIDs
			{"x", strings.Repeat("s", 32), "Café Wi‑Fi", " spaced ", "日本語のネットワーク"},
			{strings.Repeat("é", 16)}, // 32 octets
			thousand,
			{}, // clears
		} {
			want := &wnms.HotspotSSIDPolicy{PolicyCreatedAtLocID: wnms.LocalID(0), PolicyType: wnms.HotspotSSIDPolicyType, SSIDs: ssids}
			var got wnms.HotspotSSIDPolicy
			// The current policy is sent back with new ssids, as clients do.
			cur := policiesGetHotspot(t, e.Admin, "")
			cur.SSIDs = ssids
			e.Admin.Expect(http.StatusOK, "PUT", policiesHotspotPath, cur).Decode(t, &got)
			policiesDiff(t, "PUT answer", want, &got)
			policiesDiff(t, "GET after PUT", want, policiesGetHotspot(t, e.Admin, ""))
			policiesDiff(t, "stored", want, policiesStoredHotspot(t, e, 1))
			policiesDiff(t, "isdefault after PUT", def, policiesGetHotspot(t, e.Admin, "?isdefault=true"))
		}
		// Only ssids is needed; any role may write.
		_, viewer := e.NewUser(t, apitest.UserSpec{Role: wnms.Viewer})
		viewer.Expect(http.StatusOK, "PUT", "/v4/configuration/global/hotspotssid", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"Lobby"}})
		policiesDiff(t, "after a viewer's PUT", []string{"Lobby"}, policiesGetHotspot(t, e.Admin, "").SSIDs)

		stored := policiesStoredHotspot(t, e, 1)
		for _, tc := range []struct {
			name  string
			body  any
			code  string
			field string
		}{
			{"ssids absent", map[string]any{"policyType": wnms.HotspotSSIDPolicyType}, wnms.ValidationFailed, "ssids"},
			{"ssids null", `{"policyType": "HOTSPOT_SSID_POLICY", "ssids": null}`, wnms.ValidationFailed, "ssids"},
			{"empty SSID", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"a", ""}}, wnms.ValidationFailed, "ssids[1]"},
			{"null SSID", `{"policyType": "HOTSPOT_SSID_POLICY", "ssids": ["a", null]}`, wnms.ValidationFailed, "ssids[1]"},
			{"33 octets", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{strings.Repeat("s", 33)}}, wnms.ValidationFailed, "ssids[0]"},
			{"17 chars 33 octets", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{strings.Repeat("é", 16) + "x"}}, wnms.ValidationFailed, "ssids[0]"},
			{"control char", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"a\x00b"}}, wnms.ValidationFailed, "ssids[0]"},
			{"duplicate", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"Guest", "Lobby", "Guest"}}, wnms.ValidationFailed, "ssids[2]"},
			{"1001 SSIDs", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": append(append([]string{}, thousand...), "one-more")}, wnms.ValidationFailed, "ssids"},
			{"policyType of another policy", map[string]any{"policyType": wnms.SNMPPolicyType, "ssids": []string{}}, wnms.ValidationFailed, "policyType"},
			{"location not root", map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "policyCreatedAtLocId": wnms.LocalID(3), "ssids": []string{}}, wnms.ValidationFailed, "policyCreatedAtLocId"},
			{"location with childId", `{"policyType": "HOTSPOT_SSID_POLICY", "policyCreatedAtLocId": {"type": "remotelocationid", "id": 0, "childId": 2}, "ssids": []}`, wnms.ValidationFailed, "policyCreatedAtLocId"},
			{"ssids a string", `{"policyType": "HOTSPOT_SSID_POLICY", "ssids": "Guest"}`, wnms.InvalidRequestBody, "ssids"},
			{"SSID a number", `{"policyType": "HOTSPOT_SSID_POLICY", "ssids": [1]}`, wnms.InvalidRequestBody, "ssids"},
			{"array body", `["Guest"]`, wnms.InvalidRequestBody, ""},
			{"not JSON", `{"policyType": "HOTSPOT_SSID_POLICY", "ssids": [`, wnms.InvalidRequestBody, ""},
			{"empty body", ``, wnms.InvalidRequestBody, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Admin.Expect(http.StatusBadRequest, "PUT", policiesHotspotPath, tc.body)
				if r.ErrorCode() != tc.code {
					t.Errorf("error code %s, want %s; %s", r.ErrorCode(), tc.code, r.Body)
				}
				if tc.field != "" && r.MoreInfo() != tc.field {
					t.Errorf("moreInfo %q, want %s", r.MoreInfo(), tc.field)
				}
				policiesDiff(t, "GET after a refused PUT", stored, policiesGetHotspot(t, e.Admin, ""))
				policiesDiff(t, "stored after a refused PUT", stored, policiesStoredHotspot(t, e, 1))
			})
		}
	})
}

// TestPoliciesCustomers: each customer has its own policies; one
// customer's PUT never touches another's, nor resolves its masks against
// another's secrets.
func TestPoliciesCustomers(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
		e.Admin.Expect(http.StatusOK, "PUT", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"One"}})
		snmp1, hotspot1 := policiesStoredSNMP(t, e, 1), policiesStoredHotspot(t, e, 1)

		_, admin2 := e.NewUser(t, apitest.UserSpec{Role: wnms.Administrator, Customer: 2})
		// Customer 2 starts from the default, not customer 1's policy.
		policiesDiff(t, "customer 2 SNMP before", wnms.DefaultSNMPPolicy().Masked(), policiesGetSNMP(t, admin2, ""))
		policiesDiff(t, "customer 2 hotspot before", wnms.DefaultHotspotSSIDPolicy(), policiesGetHotspot(t, admin2, ""))

		// Customer 1's masked policy means nothing to customer 2: its
		// receivers' masks have no stored secret behind them.
		r := admin2.Expect(http.StatusBadRequest, "PUT", policiesSNMPPath, policiesFullSNMP().Masked())
		if r.ErrorCode() != wnms.ValidationFailed {
			t.Errorf("customer 2 PUT of customer 1's masks: %s", r.Body)
		}
		p2 := policiesFlippedSNMP()
		admin2.Expect(http.StatusOK, "PUT", policiesSNMPPath, p2)
		admin2.Expect(http.StatusOK, "PUT", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"Two"}})

		policiesDiff(t, "customer 1 SNMP", snmp1, policiesStoredSNMP(t, e, 1))
		policiesDiff(t, "customer 1 hotspot", hotspot1, policiesStoredHotspot(t, e, 1))
		policiesDiff(t, "customer 1 SNMP via GET", snmp1.Masked(), policiesGetSNMP(t, e.Admin, ""))
		policiesDiff(t, "customer 1 hotspot via GET", []string{"One"}, policiesGetHotspot(t, e.Admin, "").SSIDs)
		policiesDiff(t, "customer 2 SNMP", p2, policiesStoredSNMP(t, e, 2))
		policiesDiff(t, "customer 2 SNMP via GET", p2.Masked(), policiesGetSNMP(t, admin2, ""))
		policiesDiff(t, "customer 2 hotspot via GET", []string{"Two"}, policiesGetHotspot(t, admin2, "").SSIDs)
	})
}

// TestPoliciesSNMPConcurrent: concurrent PUTs that keep a masked secret
// and change another field all succeed, the secret survives, and the
// policy in force is one of those written.
func TestPoliciesSNMPConcurrent(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
		masked := policiesGetSNMP(t, e.Admin, "")
		const n = 8
		var wg sync.WaitGroup
		statuses := make([]int, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				p := masked.Clone()
				p.SNMPMib.SNMPMibII.SystemName = fmt.Sprintf("writer-%d", i)
				statuses[i] = e.Admin.Do("PUT", policiesSNMPPath, p).Status
			}(i)
		}
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusOK {
				t.Errorf("writer %d: status %d", i, s)
			}
		}
		got := policiesStoredSNMP(t, e, 1)
		if !strings.HasPrefix(got.SNMPMib.SNMPMibII.SystemName, "writer-") {
			t.Errorf("systemName %q is none of the writers'", got.SNMPMib.SNMPMibII.SystemName)
		}
		want := policiesFullSNMP()
		want.SNMPMib.SNMPMibII.SystemName = got.SNMPMib.SNMPMibII.SystemName
		policiesDiff(t, "after concurrent PUTs", want, got)
	})
}

func TestAuthzPolicies(t *testing.T) {
	get := func(path string) func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
		return func(*testing.T, *authzFixture, authzTarget) (string, string, any) { return "GET", path, nil }
	}
	runAuthz(t, []authzCase{
		{name: "GET snmp", request: get(policiesSNMPPath + "?isdefault=false&nodeid=0"), allowed: allRoles, ok: http.StatusOK},
		{name: "PUT snmp", request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
			return "PUT", policiesSNMPPath + "?nodeid=0", policiesFullSNMP()
		}, allowed: adUp, ok: http.StatusOK},
		{name: "GET hotspotssid", request: get(policiesHotspotPath + "?isdefault=true"), allowed: allRoles, ok: http.StatusOK},
		{name: "PUT hotspotssid", request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
			return "PUT", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"Guest"}}
		}, allowed: allRoles, ok: http.StatusOK},
	})
}

// policiesFuzzStored is the policy in force while fuzzing: every secret
// set, so masks in fuzzed bodies resolve.
var policiesFuzzStored = policiesFullSNMP()

func policiesFuzzError(t *testing.T, err error, body []byte) {
	t.Helper()
	var we *wnms.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %T %v is not a *wnms.Error", err, err)
	}
	if s := httpkit.Status(we.Code); s < 400 || s > 499 {
		t.Fatalf("error %v has status %d, want 4xx", we, s)
	}
	for _, secret := range []string{"s3cret-comm", "agent-auth-pw", "agent-priv-pw", "trap-auth-1", "trap-priv-1", "trap-auth-2"} {
		if strings.Contains(we.Error(), secret) && !strings.Contains(string(body), secret) {
			t.Fatalf("error %q shows a stored secret", we.Error())
		}
	}
}

func FuzzSNMPPolicy(f *testing.F) {
	for _, p := range []*wnms.SNMPPolicy{policiesFullSNMP(), policiesFullSNMP().Masked(), policiesFlippedSNMP(), wnms.DefaultSNMPPolicy()} {
		b, _ := json.Marshal(p)
		f.Add(b)
	}
	for _, tc := range policiesBadSNMPCases {
		b := []byte(tc.raw)
		if tc.change != nil {
			p := policiesFullSNMP()
			tc.change(p)
			b, _ = json.Marshal(p)
		}
		// Large seeds make the fuzzer spend its time minimizing them.
		if len(b) <= 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"snmpServerlist":[{"protocolVersion":"V3","userName":"u","destIpAddress":"192.0.2.10","trapPort":1162,"authenticationType":"MD5","authenticationPassword":"********","privacyProtocol":"DES","privacyPassword":"********"}]}`))
	f.Add([]byte(`{"policyCreatedAtLocId":{"type":"LocalLocationId","id":0},"snmpServerlist":[{"protocolVersion":"V2C","destIpAddress":"a.b"}],"snmpSettings":{"versionOneTwoSettings":{"communityString":"********"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := wnms.ParseSNMPPolicy(body, policiesFuzzStored)
		if err != nil {
			policiesFuzzError(t, err, body)
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed policy does not validate: %v", err)
		}
		// The stored form round-trips through JSON unchanged.
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := wnms.ParseSNMPPolicy(b, nil)
		if err != nil {
			t.Fatalf("round trip of %s: %v", b, err)
		}
		if d := cmp.Diff(p, again); d != "" {
			t.Fatalf("round trip changed the policy (-want +got):\n%s", d)
		}
		// What a client sees, sent back, is the same policy.
		mb, err := json.Marshal(p.Masked())
		if err != nil {
			t.Fatal(err)
		}
		unmasked, err := wnms.ParseSNMPPolicy(mb, p)
		if err != nil {
			t.Fatalf("masked round trip of %s: %v", mb, err)
		}
		if d := cmp.Diff(p, unmasked); d != "" {
			t.Fatalf("masked round trip changed the policy (-want +got):\n%s", d)
		}
	})
}

func FuzzHotspotPolicy(f *testing.F) {
	for _, body := range []string{
		`{"ssids":[]}`,
		`{"policyType":"HOTSPOT_SSID_POLICY","policyCreatedAtLocId":{"type":"locallocationid","id":0},"ssids":["Guest","guest"]}`,
		`{"ssids":["éééééééééééééééé"]}`,
		`{"ssids":["a","a"]}`,
		`{"ssids":null}`,
		`{"ssids":["\u0000"]}`,
		`{"ssids":"x"}`,
		`[]`,
		`{"policyType":"SNMP_POLICY","ssids":[]}`,
		`{"policyCreatedAtLocId":{"id":4},"ssids":[]}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := wnms.ParseHotspotSSIDPolicy(body)
		if err != nil {
			policiesFuzzError(t, err, body)
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed policy does not validate: %v", err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := wnms.ParseHotspotSSIDPolicy(b)
		if err != nil {
			t.Fatalf("round trip of %s: %v", b, err)
		}
		if d := cmp.Diff(p, again); d != "" {
			t.Fatalf("round trip changed the policy (-want +got):\n%s", d)
		}
	})
}

// A PUT replaces the whole policy, so a body that does not carry it is
// refused and changes nothing: {"bogus":1} once reset the SNMP policy to
// its defaults, community included.
func TestPoliciesJunkPutRefused(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
		e.Admin.Expect(http.StatusOK, "PUT", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{"Guest"}})
		snmp, hotspot := policiesStoredSNMP(t, e, 1), policiesStoredHotspot(t, e, 1)
		full := func(drop string, extra map[string]any) map[string]any {
			var m map[string]any
			raw, _ := json.Marshal(policiesFullSNMP())
			json.Unmarshal(raw, &m)
			delete(m, drop)
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		for _, tc := range []struct {
			name  string
			path  string
			body  any
			code  string
			field string
		}{
			{"snmp: only junk", policiesSNMPPath, `{"bogus":1}`, wnms.ValidationFailed, "policyType"},
			{"snmp: empty object", policiesSNMPPath, `{}`, wnms.ValidationFailed, "policyType"},
			{"snmp: no snmpSettings", policiesSNMPPath, full("snmpSettings", nil), wnms.ValidationFailed, "snmpSettings"},
			{"snmp: no snmpMib", policiesSNMPPath, full("snmpMib", nil), wnms.ValidationFailed, "snmpMib"},
			{"snmp: no snmpServerlist", policiesSNMPPath, full("snmpServerlist", nil), wnms.ValidationFailed, "snmpServerlist"},
			{"snmp: no snmpIntegrationEnabled", policiesSNMPPath, full("snmpIntegrationEnabled", nil), wnms.ValidationFailed, "snmpIntegrationEnabled"},
			{"snmp: no policyType", policiesSNMPPath, full("policyType", nil), wnms.ValidationFailed, "policyType"},
			{"snmp: an unknown field", policiesSNMPPath, full("", map[string]any{"bogus": 1}), wnms.InvalidRequestBody, "bogus"},
			{"hotspot: only junk", policiesHotspotPath, `{"bogus":1}`, wnms.ValidationFailed, "policyType"},
			{"hotspot: an unknown field", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType, "ssids": []string{}, "ssid": "x"}, wnms.InvalidRequestBody, "ssid"},
			{"hotspot: no ssids", policiesHotspotPath, map[string]any{"policyType": wnms.HotspotSSIDPolicyType}, wnms.ValidationFailed, "ssids"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Admin.Do("PUT", tc.path, tc.body)
				var eb struct {
					Errors []struct{ ErrorCode, MoreInfo string } `json:"errors"`
				}
				r.Decode(t, &eb)
				if r.Status != 400 || len(eb.Errors) != 1 || eb.Errors[0].ErrorCode != tc.code || eb.Errors[0].MoreInfo != tc.field {
					t.Errorf("status %d %s, want 400 %s naming %s", r.Status, r.Body, tc.code, tc.field)
				}
			})
		}
		policiesDiff(t, "SNMP policy after junk", snmp, policiesStoredSNMP(t, e, 1))
		policiesDiff(t, "hotspot policy after junk", hotspot, policiesStoredHotspot(t, e, 1))
	})
}
