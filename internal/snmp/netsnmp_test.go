package snmp

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/metrics"

	"github.com/wnms/wnms/internal/snmp/snmptest"

	"github.com/wnms/wnms/internal/wnms"
)

// testPolicy is a policy with queries on for v2c (community "public")
// and for the v3 user "agentuser", and every MIB.
func testPolicy() *wnms.SNMPPolicy {
	p := wnms.DefaultSNMPPolicy()
	p.SNMPIntegrationEnabled = true
	p.SNMPSettings.GetEnabled = true
	p.SNMPSettings.TrapEnabled = true
	p.SNMPSettings.VersionOneTwoSettings = wnms.SNMPv12Settings{EnableGets: true, CommunityString: "public"}
	p.SNMPSettings.VersionThreeSettings = wnms.SNMPv3Settings{EnableGets: true, UserName: "agentuser",
		AuthenticationProtocol: wnms.AuthSHA256, AuthenticationPassword: "authpass123",
		PrivacyProtocol: wnms.PrivAES, PrivacyPassword: "privpass123", EngineID: "0x80003a8c04776e6d7374657374"}
	p.SNMPMib.SNMPMibII = wnms.SNMPMibII{SystemName: "wnms-test", SystemContact: "noc@example.net", SystemLocation: "Lab, rack 3"}
	return p
}

// policyBox holds a policy that tests change under a running agent.
type policyBox struct {
	mu sync.Mutex
	p  *wnms.SNMPPolicy
}

func (b *policyBox) get(context.Context) (*wnms.SNMPPolicy, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.p.Clone(), nil
}

func (b *policyBox) set(p *wnms.SNMPPolicy) {
	b.mu.Lock()
	b.p = p
	b.mu.Unlock()
}

// startAgent runs an agent on a loopback port and returns its address.
func startAgent(t *testing.T, box *policyBox) (*Agent, string) {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Policy: box.get, Engine: NewEngine(7, []byte("secret")), DataDir: t.TempDir(), Description: "wnms test",
		Counts: func(context.Context) (wnms.SNMPCounts, error) {
			return wnms.SNMPCounts{APsUp: 3, APsDown: 1, Clients: 42}, nil
		}}
	a.Instrument(metrics.NewRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Serve(ctx, conn, time.Hour); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return a, conn.LocalAddr().String()
}

// values parses net-snmp's -On output: OID → "TYPE: value".
func values(out string) (oids []string, vals map[string]string) {
	oids, vals, _ = walkValues(out)
	return oids, vals
}

// walkValues is values, and whether the walk ended at endOfMibView.
func walkValues(out string) (oids []string, vals map[string]string, endOfView bool) {
	vals = map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		oid, v, ok := strings.Cut(l, " = ")
		if !ok || !strings.HasPrefix(oid, ".") {
			continue
		}
		if strings.HasPrefix(v, "No more variables left") { // endOfMibView, printed at the end of a walk
			endOfView = true
			continue
		}
		oids = append(oids, oid)
		vals[oid] = v
	}
	return oids, vals, endOfView
}

func TestAgentAnswersNetSNMP(t *testing.T) {
	box := &policyBox{p: testPolicy()}
	_, addr := startAgent(t, box)
	env := snmptest.Env(t)
	v3 := func(level string, extra ...string) []string {
		return append([]string{"-v3", "-l", level, "-u", "agentuser", "-a", "SHA-256", "-A", "authpass123"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"v1", []string{"-v1", "-c", "public"}},
		{"v2c", []string{"-v2c", "-c", "public"}},
		{"v3 authNoPriv", v3("authNoPriv")},
		{"v3 authPriv AES", v3("authPriv", "-x", "AES", "-X", "privpass123")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-On", "-t", "2", "-r", "1"}, tc.args...), addr,
				".1.3.6.1.2.1.1.5.0", ".1.3.6.1.2.1.1.6.0", ".1.3.6.1.4.1.61550.1.1.3.0")
			out, err := snmptest.Run(t, env, "snmpget", args...)
			if err != nil {
				t.Fatalf("snmpget: %v\n%s", err, out)
			}
			_, vals := values(out)
			for oid, want := range map[string]string{
				".1.3.6.1.2.1.1.5.0":         `STRING: "wnms-test"`,
				".1.3.6.1.2.1.1.6.0":         `STRING: "Lab, rack 3"`,
				".1.3.6.1.4.1.61550.1.1.3.0": "Gauge32: 42",
			} {
				if vals[oid] != want {
					t.Errorf("%s = %q, want %q\n%s", oid, vals[oid], want, out)
				}
			}
		})
	}

	// Walks: every OID strictly greater than the one before, and the walk
	// ends by itself (endOfMibView; snmpwalk fails on a loop with "OID not
	// increasing").
	for _, tc := range []struct {
		tool string
		args []string
	}{
		{"snmpwalk", []string{"-v2c", "-c", "public"}},
		{"snmpbulkwalk", []string{"-v2c", "-c", "public", "-Cr25"}},
		{"snmpwalk", v3("authPriv", "-x", "AES", "-X", "privpass123")},
		{"snmpbulkwalk", v3("authNoPriv")},
		{"snmpwalk", []string{"-v1", "-c", "public"}},
	} {
		t.Run(tc.tool+" "+strings.Join(tc.args[:1], ""), func(t *testing.T) {
			args := append(append([]string{"-On", "-t", "2", "-r", "1"}, tc.args...), addr, ".1")
			out, err := snmptest.Run(t, env, tc.tool, args...)
			if err != nil || strings.Contains(out, "not increasing") {
				t.Fatalf("%s: %v\n%s", tc.tool, err, out)
			}
			oids, vals, end := walkValues(out)
			if !end && tc.args[0] != "-v1" {
				t.Errorf("the walk did not end at endOfMibView:\n%s", out)
			}
			if len(oids) < 20 {
				t.Fatalf("walk returned %d objects:\n%s", len(oids), out)
			}
			for i := 1; i < len(oids); i++ {
				if MustOID(oids[i-1]).Compare(MustOID(oids[i])) >= 0 {
					t.Fatalf("OIDs not increasing: %s then %s", oids[i-1], oids[i])
				}
			}
			for _, want := range []string{".1.3.6.1.2.1.1.1.0", ".1.3.6.1.2.1.2.1.0", ".1.3.6.1.2.1.25.1.1.0",
				".1.3.6.1.2.1.25.2.3.1.3.1", ".1.3.6.1.4.1.61550.1.1.1.0"} {
				if _, ok := vals[want]; !ok {
					t.Errorf("walk lacks %s", want)
				}
			}
			if tc.args[0] == "-v1" {
				for oid, v := range vals {
					if strings.HasPrefix(v, "Counter64") {
						t.Errorf("SNMPv1 walk returned a Counter64 at %s", oid)
					}
				}
			}
		})
	}
}

// TestAgentRefusesSilently: a wrong community, user or password gets no
// answer at all, and each is counted.
func TestAgentRefusesSilently(t *testing.T) {
	box := &policyBox{p: testPolicy()}
	a, addr := startAgent(t, box)
	env := snmptest.Env(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"wrong community", []string{"-v2c", "-c", "private"}},
		{"unknown user", []string{"-v3", "-l", "authNoPriv", "-u", "mallory", "-a", "SHA-256", "-A", "authpass123"}},
		{"wrong password", []string{"-v3", "-l", "authNoPriv", "-u", "agentuser", "-a", "SHA-256", "-A", "wrongpass99"}},
		{"wrong protocol", []string{"-v3", "-l", "authNoPriv", "-u", "agentuser", "-a", "MD5", "-A", "authpass123"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-On", "-t", "1", "-r", "0"}, tc.args...), addr, ".1.3.6.1.2.1.1.5.0")
			out, err := snmptest.Run(t, env, "snmpget", args...)
			if err == nil || !strings.Contains(out, "Timeout") {
				t.Fatalf("want no answer (a timeout), got %v:\n%s", err, out)
			}
		})
	}
	for result, want := range map[string]uint64{resBadCommunity: 1, resUnknownUser: 1, resWrongDigest: 2} {
		if got := a.requests.With(result).Value(); got != want {
			t.Errorf("%s counted %d times, want %d; decryption errors %d", result, got, want, a.requests.With(resDecryptError).Value())
		}
	}
}

// TestAgentFollowsThePolicy: switches apply at the next reload, without
// a restart.
func TestAgentFollowsThePolicy(t *testing.T) {
	box := &policyBox{p: testPolicy()}
	a, addr := startAgent(t, box)
	env := snmptest.Env(t)
	get := func(oid string) (string, error) {
		return snmptest.Run(t, env, "snmpget", "-On", "-t", "1", "-r", "0", "-v2c", "-c", "public", addr, oid)
	}
	if out, err := get(".1.3.6.1.2.1.1.5.0"); err != nil {
		t.Fatalf("before: %v %s", err, out)
	}
	p := testPolicy()
	p.SNMPMib.MibIIEnabled = false
	box.set(p)
	if err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, _ := get(".1.3.6.1.2.1.1.5.0"); !strings.Contains(out, "No Such Object") {
		t.Errorf("MIB-II off: %s", out)
	}
	p = testPolicy()
	p.SNMPSettings.GetEnabled = false
	box.set(p)
	if err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, err := get(".1.3.6.1.2.1.1.5.0"); err == nil || !strings.Contains(out, "Timeout") {
		t.Errorf("queries off: want no answer, got %v %s", err, out)
	}
}

// engineHex is the engine id of testPolicy, as snmptrapd's createUser
// takes it.
const engineHex = "0x80003a8c04776e6d7374657374"

func TestTrapsReachSnmptrapd(t *testing.T) {
	type combo struct {
		name             string
		version          wnms.SNMPVersion
		auth             wnms.SNMPAuthProtocol
		priv             wnms.SNMPPrivProtocol
		netAuth, netPriv string
	}
	combos := []combo{
		{"v2c", wnms.SNMPv2c, "", "", "", ""},
		{"v1", wnms.SNMPv1, "", "", "", ""},
		{"v3 MD5 DES", wnms.SNMPv3, wnms.AuthMD5, wnms.PrivDES, "MD5", "DES"},
		{"v3 SHA noPriv", wnms.SNMPv3, wnms.AuthSHA, wnms.PrivNone, "SHA", ""},
		{"v3 SHA AES", wnms.SNMPv3, wnms.AuthSHA, wnms.PrivAES, "SHA", "AES"},
		{"v3 SHA224 AES192", wnms.SNMPv3, wnms.AuthSHA224, wnms.PrivAES192, "SHA-224", "AES192"},
		{"v3 SHA256 AES256", wnms.SNMPv3, wnms.AuthSHA256, wnms.PrivAES256, "SHA-256", "AES256"},
		{"v3 SHA384 AES", wnms.SNMPv3, wnms.AuthSHA384, wnms.PrivAES, "SHA-384", "AES"},
		{"v3 SHA512 AES256", wnms.SNMPv3, wnms.AuthSHA512, wnms.PrivAES256, "SHA-512", "AES256"},
		{"v3 SHA512 DES", wnms.SNMPv3, wnms.AuthSHA512, wnms.PrivDES, "SHA-512", "DES"},
	}
	conf := "authCommunity log public\n"
	for i, c := range combos {
		if c.version != wnms.SNMPv3 {
			continue
		}
		user := "trapuser" + string(rune('a'+i))
		line := "createUser -e " + engineHex + " " + user + " " + c.netAuth + " authpass123"
		if c.netPriv != "" {
			line += " " + c.netPriv + " privpass123"
		}
		conf += line + "\nauthUser log " + user + "\n"
	}
	d := snmptest.StartTrapd(t, conf)
	port := d.Port
	for i, c := range combos {
		t.Run(c.name, func(t *testing.T) {
			p := testPolicy()
			r := wnms.SNMPServer{EnableTraps: true, TrapPort: port, ProtocolVersion: c.version, DestIPAddress: "127.0.0.1",
				AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone}
			if c.version == wnms.SNMPv3 {
				r.UserName, r.AuthenticationType, r.AuthenticationPassword = "trapuser"+string(rune('a'+i)), c.auth, "authpass123"
				if c.priv != "" {
					r.PrivacyProtocol, r.PrivacyPassword = c.priv, "privpass123"
				}
			}
			p.SNMPServerList = []wnms.SNMPServer{r}
			box := &policyBox{p: p}
			s := NewSender(func(context.Context, int64) (*wnms.SNMPPolicy, error) { return box.get(context.Background()) },
				NewEngine(3, []byte("secret")), nil)
			res, err := s.TestTrap(context.Background(), 1, c.name)
			if err != nil || len(res) != 1 || !res[0].Sent {
				t.Fatal(res, err)
			}
			out := d.WaitFor(t, `"test trap sent by `+c.name+`"`)
			if c.version != wnms.SNMPv1 && !strings.Contains(out, "OID: .1.3.6.1.4.1.61550.0.1") {
				t.Errorf("no wnmsTestTrap OID in:\n%s", out)
			}
		})
	}
}

// TestEveryTrapKindCarriesItsVarbinds sends each kind through the queue
// to a real snmptrapd and reads what arrived.
func TestEveryTrapKindCarriesItsVarbinds(t *testing.T) {
	d := snmptest.StartTrapd(t, "authCommunity log public\n")
	p := testPolicy()
	port := d.Port
	p.SNMPServerList = []wnms.SNMPServer{{EnableTraps: true, TrapPort: port, ProtocolVersion: wnms.SNMPv2c, DestIPAddress: "127.0.0.1"}}
	box := &policyBox{p: p}
	s := NewSender(func(context.Context, int64) (*wnms.SNMPPolicy, error) { return box.get(context.Background()) },
		NewEngine(3, []byte("secret")), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)

	s.ColdStart(1)
	d.WaitFor(t, "OID: .1.3.6.1.6.3.1.1.5.1")
	s.APChange(1, 42, "ap-lobby-1", "00:11:74:00:00:01", "/Campus/Building A/Floor 1", false)
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.2", `.1.3.6.1.4.1.61550.1.2.1 = STRING: "ap-lobby-1"`,
		`.1.3.6.1.4.1.61550.1.2.2 = STRING: "00:11:74:00:00:01"`, `.1.3.6.1.4.1.61550.1.2.3 = STRING: "/Campus/Building A/Floor 1"`,
		".1.3.6.1.4.1.61550.1.2.10 = INTEGER: 42")
	s.APChange(1, 42, "ap-lobby-1", "00:11:74:00:00:01", "/Campus/Building A/Floor 1", true)
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.3")
	s.UserLocked(1, "alice")
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.5", `.1.3.6.1.4.1.61550.1.2.8 = STRING: "alice"`)
	s.BaselineAnomaly(Anomaly{CustomerID: 1, Kind: "connectivity", LocationPath: "/Campus/Building A/Floor 2",
		SlotStart: time.Date(2026, 11, 22, 9, 15, 0, 0, time.UTC), Observation: 41.5, Threshold: 72.25})
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.4", `.1.3.6.1.4.1.61550.1.2.4 = STRING: "connectivity"`,
		`.1.3.6.1.4.1.61550.1.2.5 = STRING: "2026-11-22T09:15:00Z"`, `.1.3.6.1.4.1.61550.1.2.6 = STRING: "41.5"`,
		`.1.3.6.1.4.1.61550.1.2.7 = STRING: "72.25"`)
	// A performance anomaly that names an AP carries the AP's objects too.
	s.BaselineAnomaly(Anomaly{CustomerID: 1, Kind: "performance", LocationPath: "/Campus/Building A/Floor 3",
		SlotStart: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC), Observation: 38, Threshold: 12,
		AP: &AnomalyAP{BoxID: 7, Name: "ap-east-2", MacAddress: "00:11:74:00:00:07"}})
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.4", `.1.3.6.1.4.1.61550.1.2.4 = STRING: "performance"`,
		`.1.3.6.1.4.1.61550.1.2.1 = STRING: "ap-east-2"`, `.1.3.6.1.4.1.61550.1.2.2 = STRING: "00:11:74:00:00:07"`,
		".1.3.6.1.4.1.61550.1.2.10 = INTEGER: 7")
	in := Incident{CustomerID: 1, ID: 17, LocationPath: "/Campus/Building A", At: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC),
		Cause: "authentication: RADIUS server unreachable", Scope: "ssid corp"}
	s.IncidentChange(in, false)
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.8", ".1.3.6.1.4.1.61550.1.2.13 = INTEGER: 17",
		`.1.3.6.1.4.1.61550.1.2.3 = STRING: "/Campus/Building A"`, `.1.3.6.1.4.1.61550.1.2.5 = STRING: "2026-11-22T09:00:00Z"`,
		`.1.3.6.1.4.1.61550.1.2.14 = STRING: "authentication: RADIUS server unreachable"`, `.1.3.6.1.4.1.61550.1.2.15 = STRING: "ssid corp"`)
	s.IncidentChange(in, true)
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.9")
}
