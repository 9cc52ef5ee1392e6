package snmp

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/snmp/snmptest"

	"github.com/gosnmp/gosnmp"

	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// newTestAgent is an agent configured with testPolicy, not listening:
// tests hand it messages through Handle.
func newTestAgent(t testing.TB) (*Agent, *metrics.Registry) {
	t.Helper()
	box := &policyBox{p: testPolicy()}
	a := &Agent{Policy: box.get, Engine: NewEngine(7, []byte("secret")), DataDir: t.TempDir(), Description: "wnms test"}
	reg := metrics.NewRegistry()
	a.Instrument(reg)
	if err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a, reg
}

func metricText(reg *metrics.Registry) string {
	var b bytes.Buffer
	reg.Write(&b)
	return b.String()
}

// v3Client is a manager's side of USM for the test user, already
// discovered: it knows the agent's engine id, boots and time.
func v3Client(a *Agent, engineTime uint32, level gosnmp.SnmpV3MsgFlags) *gosnmp.GoSNMP {
	id, _ := a.Engine.engineID(testPolicy().SNMPSettings.VersionThreeSettings.EngineID)
	sp := &gosnmp.UsmSecurityParameters{UserName: "agentuser", AuthoritativeEngineID: id,
		AuthoritativeEngineBoots: a.Engine.Boots, AuthoritativeEngineTime: engineTime,
		AuthenticationProtocol: gosnmp.SHA256, AuthenticationPassphrase: "authpass123",
		PrivacyProtocol: gosnmp.AES, PrivacyPassphrase: "privpass123"}
	if level == gosnmp.AuthNoPriv {
		sp.PrivacyProtocol, sp.PrivacyPassphrase = gosnmp.NoPriv, ""
	}
	if err := sp.InitSecurityKeys(); err != nil {
		panic(err)
	}
	return &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: level,
		SecurityParameters: sp, ContextEngineID: id, MaxOids: 200}
}

// decodeAs decodes an answer with the client's keys.
func decodeAs(t *testing.T, x *gosnmp.GoSNMP, out []byte) *gosnmp.SnmpPacket {
	t.Helper()
	if out == nil {
		t.Fatal("no answer")
	}
	p, err := x.SnmpDecodePacket(out)
	if err != nil {
		t.Fatalf("decoding the answer: %v", err)
	}
	return p
}

func TestAgentUSMSteps(t *testing.T) {
	a, reg := newTestAgent(t)
	sysName := []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.Null}}

	// Discovery: no engine id, no user → a report that carries ours.
	disc := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.Reportable, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: &gosnmp.UsmSecurityParameters{}, MsgID: 9, MsgMaxSize: 65507, PDUType: gosnmp.GetRequest, RequestID: 77}
	msg, err := disc.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	rep := decodeAs(t, &gosnmp.GoSNMP{Version: gosnmp.Version2c}, a.Handle(msg))
	usm := rep.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	wantID, _ := a.Engine.engineID(testPolicy().SNMPSettings.VersionThreeSettings.EngineID)
	if rep.PDUType != gosnmp.Report || rep.Variables[0].Name != oidUnknownEngineIDs.String() ||
		usm.AuthoritativeEngineID != wantID || usm.AuthoritativeEngineBoots != 7 || rep.MsgID != 9 || rep.RequestID != 77 {
		t.Fatalf("discovery report: %v", rep)
	}

	// In time, both levels: answered.
	for _, level := range []gosnmp.SnmpV3MsgFlags{gosnmp.AuthNoPriv, gosnmp.AuthPriv} {
		x := v3Client(a, a.Engine.Time(), level)
		msg, err := x.SnmpEncodePacket(gosnmp.GetRequest, sysName, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		resp := decodeAs(t, v3Client(a, 0, level), a.Handle(msg))
		if resp.PDUType != gosnmp.GetResponse || string(resp.Variables[0].Value.([]byte)) != "wnms-test" {
			t.Fatalf("level %v: %v", level, resp)
		}
	}

	// Out of the time window, or a message replayed 200 s later: a report,
	// authenticated, and no data.
	x := v3Client(a, a.Engine.Time()+1000, gosnmp.AuthPriv)
	msg, _ = x.SnmpEncodePacket(gosnmp.GetRequest, sysName, 0, 0)
	rep = decodeAs(t, v3Client(a, 0, gosnmp.AuthNoPriv), a.Handle(msg))
	if rep.PDUType != gosnmp.Report || rep.Variables[0].Name != oidNotInTimeWindows.String() {
		t.Fatalf("out of window: %v", rep)
	}
	x = v3Client(a, a.Engine.Time(), gosnmp.AuthPriv)
	msg, _ = x.SnmpEncodePacket(gosnmp.GetRequest, sysName, 0, 0)
	start := a.Engine.Start
	a.Engine.Start = start.Add(-200 * time.Second)
	rep = decodeAs(t, v3Client(a, 0, gosnmp.AuthNoPriv), a.Handle(msg))
	a.Engine.Start = start
	if rep.PDUType != gosnmp.Report || rep.Variables[0].Name != oidNotInTimeWindows.String() {
		t.Fatalf("replayed: %v", rep)
	}

	// A tampered message: nothing.
	msg, _ = v3Client(a, a.Engine.Time(), gosnmp.AuthNoPriv).SnmpEncodePacket(gosnmp.GetRequest, sysName, 0, 0)
	msg[len(msg)-3] ^= 1
	if out := a.Handle(msg); out != nil {
		t.Fatal("a tampered message was answered")
	}
	m := metricText(reg)
	for _, want := range []string{`result="unknown_engine"} 1`, `result="not_in_time_window"} 2`, `result="wrong_digest"} 1`, `result="answered"} 2`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

func TestAgentBadInput(t *testing.T) {
	a, reg := newTestAgent(t)
	v2 := func(p *gosnmp.SnmpPacket) []byte {
		p.Version, p.Community = gosnmp.Version2c, "public"
		b, err := p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := v2(&gosnmp.SnmpPacket{PDUType: gosnmp.GetRequest, RequestID: 1, Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.Null}}})
	wrongVersion := bytes.Clone(good)
	wrongVersion[4] = 5 // version INTEGER 5
	many := make([]gosnmp.SnmpPDU, maxVarbinds+1)
	for i := range many {
		many[i] = gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.Null}
	}
	for _, tc := range []struct {
		name   string
		msg    []byte
		answer bool
	}{
		{"empty", nil, false},
		{"garbage", []byte("GET / HTTP/1.1\r\n\r\n"), false},
		{"truncated", good[:len(good)-4], false},
		{"wrong version", wrongVersion, false},
		{"oversize junk", bytes.Repeat([]byte{0x30, 0x84, 0xff, 0xff}, MaxMessage/4), false},
		{"too many varbinds", v2(&gosnmp.SnmpPacket{PDUType: gosnmp.GetRequest, RequestID: 2, Variables: many}), true},
		{"a response", v2(&gosnmp.SnmpPacket{PDUType: gosnmp.GetResponse, RequestID: 3}), false},
		{"set", v2(&gosnmp.SnmpPacket{PDUType: gosnmp.SetRequest, RequestID: 4,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.OctetString, Value: "x"}}}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := a.Handle(tc.msg)
			if (out != nil) != tc.answer {
				t.Fatalf("answered %v, want %v", out != nil, tc.answer)
			}
			if out != nil {
				p, err := (&gosnmp.GoSNMP{Version: gosnmp.Version2c}).SnmpDecodePacket(out)
				if err != nil || p.Error == gosnmp.NoError {
					t.Fatalf("want an error status, got %v %v", p, err)
				}
			}
		})
	}

	// GETBULK asking for 4 billion repetitions gets what fits in 8 KB (an
	// SNMPv1/v2c answer once reached 32 KB for a 194-byte request), and
	// the walk goes on from there.
	bulk := v2(&gosnmp.SnmpPacket{PDUType: gosnmp.GetBulkRequest, RequestID: 5, NonRepeaters: 0, MaxRepetitions: 1<<32 - 1,
		Variables: []gosnmp.SnmpPDU{{Name: ".1.3", Type: gosnmp.Null}}})
	out := a.Handle(bulk)
	p, err := (&gosnmp.GoSNMP{Version: gosnmp.Version2c}).SnmpDecodePacket(out)
	if err != nil || p.Error != gosnmp.NoError || len(p.Variables) == 0 || len(p.Variables) > maxRepetitions || len(out) > maxCommunityResponse {
		t.Fatalf("bulk: %d varbinds, %d bytes, %v", len(p.Variables), len(out), err)
	}
	if !strings.Contains(metricText(reg), `result="malformed"}`) {
		t.Error("malformed messages not counted")
	}
}

// TestAgentGetBulkFitsTheLimit: an answer stays within the size the
// manager accepts (SNMPv3's msgMaxSize), however many repetitions it asks.
func TestAgentGetBulkFitsTheLimit(t *testing.T) {
	a, _ := newTestAgent(t)
	for _, limit := range []int{484, 1400, 8192} {
		req := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, PDUType: gosnmp.GetBulkRequest, MaxRepetitions: 10000,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3", Type: gosnmp.Null}, {Name: ".1.3.6.1.2.1.2", Type: gosnmp.Null}}}
		resp := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetResponse}
		if !a.answer(a.config(), req, resp, limit) {
			t.Fatal("no answer")
		}
		out, err := resp.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > limit || len(resp.Variables) < 2 {
			t.Errorf("limit %d: %d octets, %d varbinds", limit, len(out), len(resp.Variables))
		}
	}
}

// TestSenderNeverBlocks: a burst far beyond the queue returns at once,
// and what does not fit is counted as dropped.
func TestSenderNeverBlocks(t *testing.T) {
	var reads atomic.Int64
	s := NewSender(func(ctx context.Context, id int64) (*wnms.SNMPPolicy, error) {
		reads.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}, NewEngine(1, nil), nil)
	reg := metrics.NewRegistry()
	s.Instrument(reg)
	start := time.Now()
	for i := 0; i < 3*QueueSize; i++ {
		s.BaselineAnomaly(Anomaly{CustomerID: 1, Kind: "connectivity"})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("queueing %d traps took %s", 3*QueueSize, d)
	}
	if !strings.Contains(metricText(reg), `wnms_snmp_traps_total{kind="wnmsBaselineAnomaly",result="dropped"} 2048`) {
		t.Errorf("drops not counted:\n%s", metricText(reg))
	}
}

// TestSenderCountsAReceiverThatCannotBeReached: a receiver whose name
// does not resolve costs a counted failure, and the others still get
// theirs.
func TestSenderCountsAReceiverThatCannotBeReached(t *testing.T) {
	d := snmptest.StartTrapd(t, "authCommunity log public\n")
	p := testPolicy()
	port := d.Port
	p.SNMPServerList = []wnms.SNMPServer{
		{EnableTraps: true, TrapPort: 162, ProtocolVersion: "V2C", DestIPAddress: "receiver.invalid"},
		{EnableTraps: true, TrapPort: port, ProtocolVersion: "V2C", DestIPAddress: "127.0.0.1"},
	}
	s := NewSender(func(context.Context, int64) (*wnms.SNMPPolicy, error) { return p, nil }, NewEngine(1, nil), nil)
	reg := metrics.NewRegistry()
	s.Instrument(reg)
	res, err := s.TestTrap(context.Background(), 1, "two receivers")
	if err != nil || len(res) != 2 || res[0].Sent || res[0].Message == "" || !res[1].Sent {
		t.Errorf("TestTrap: %+v %v", res, err)
	}
	d.WaitFor(t, `"test trap sent by two receivers"`)
	m := metricText(reg)
	if !strings.Contains(m, `kind="wnmsTestTrap",result="failed"} 1`) || !strings.Contains(m, `kind="wnmsTestTrap",result="sent"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}

// FuzzAgentHandle feeds the agent arbitrary datagrams through gosnmp's
// decoder: no input may panic, and only well-formed requests from the
// configured community or user are answered.
func FuzzAgentHandle(f *testing.F) {
	a, reg := newTestAgent(f)
	seeds := [][]byte{}
	for _, p := range []*gosnmp.SnmpPacket{
		{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetRequest, RequestID: 1, Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.Null}}},
		{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.GetNextRequest, RequestID: 2, Variables: []gosnmp.SnmpPDU{{Name: ".1.3", Type: gosnmp.Null}}},
		{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetBulkRequest, RequestID: 3, NonRepeaters: 1, MaxRepetitions: 50,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.Null}, {Name: ".1.3.6.1.2.1.2", Type: gosnmp.Null}}},
		{Version: gosnmp.Version3, MsgFlags: gosnmp.Reportable, SecurityModel: gosnmp.UserSecurityModel,
			SecurityParameters: &gosnmp.UsmSecurityParameters{}, MsgID: 4, MsgMaxSize: 65507, PDUType: gosnmp.GetRequest},
	} {
		b, err := p.MarshalMsg()
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, level := range []gosnmp.SnmpV3MsgFlags{gosnmp.AuthNoPriv, gosnmp.AuthPriv} {
		b, err := v3Client(a, a.Engine.Time(), level).SnmpEncodePacket(gosnmp.GetNextRequest,
			[]gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1", Type: gosnmp.Null}}, 0, 0)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		a.Handle(msg)
		if strings.Contains(metricText(reg), `result="panic"`) {
			t.Fatalf("the agent panicked on %x", msg)
		}
	})
}
