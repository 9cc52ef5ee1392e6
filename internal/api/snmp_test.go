package api_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/snmp/snmptest"
	"github.com/wnms/wnms/internal/wnms"
)

const testTrapPath = "/V5/configuration/global/snmp/testtrap"

// trapPolicy is a policy that sends traps to the given receivers.
func trapPolicy(receivers ...wnms.SNMPServer) *wnms.SNMPPolicy {
	p := wnms.DefaultSNMPPolicy()
	p.SNMPIntegrationEnabled = true
	p.SNMPSettings.TrapEnabled = true
	p.SNMPServerList = receivers
	return p
}

func v2cReceiver(port int) wnms.SNMPServer {
	return wnms.SNMPServer{EnableTraps: true, TrapPort: port, ProtocolVersion: wnms.SNMPv2c, DestIPAddress: "127.0.0.1",
		AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone}
}

func storeSNMPPolicy(t *testing.T, e *apitest.Env, customer int64, p *wnms.SNMPPolicy) {
	t.Helper()
	_, err := e.Store.UpdateSNMPPolicy(context.Background(), customer, func(*wnms.SNMPPolicy) (*wnms.SNMPPolicy, error) { return p, nil })
	if err != nil {
		t.Fatal(err)
	}
}

// TestSNMPTestTrap: the test trap reaches a real snmptrapd through the
// policy stored with PUT, with the caller's login in it; a policy that
// sends nothing is a conflict that says why.
func TestSNMPTestTrap(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		expectError(t, e.Admin.Do("POST", testTrapPath, nil), http.StatusConflict, wnms.Conflict, "trapEnabled")

		p := trapPolicy()
		storeSNMPPolicy(t, e, 1, p)
		expectError(t, e.Admin.Do("POST", testTrapPath, nil), http.StatusConflict, wnms.Conflict, "enableTraps")

		d := snmptest.StartTrapd(t, "authCommunity log public\n")
		body := trapPolicy(v2cReceiver(d.Port), wnms.SNMPServer{EnableTraps: true, TrapPort: 162,
			ProtocolVersion: wnms.SNMPv2c, DestIPAddress: "receiver.invalid", AuthenticationType: wnms.AuthNone, PrivacyProtocol: wnms.PrivNone})
		e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, body)
		var res struct {
			Kind      string `json:"kind"`
			Receivers []struct {
				DestIPAddress string `json:"destIpAddress"`
				Sent          bool   `json:"sent"`
				Message       string `json:"message"`
			} `json:"receivers"`
		}
		e.Admin.Expect(http.StatusOK, "POST", testTrapPath+"?nodeid=0", nil).Decode(t, &res)
		if res.Kind != "wnmsTestTrap" || len(res.Receivers) != 2 || !res.Receivers[0].Sent || res.Receivers[1].Sent ||
			res.Receivers[1].Message == "" {
			t.Fatalf("answer: %+v", res)
		}
		d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.1", `"test trap sent by `)

		expectError(t, e.Admin.Do("POST", testTrapPath+"?nodeid=x", nil), http.StatusBadRequest, wnms.InvalidParameter, "nodeid")
	})
}

func TestAuthzTestTrap(t *testing.T) {
	// A receiver that swallows what it gets.
	sink, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	port := sink.LocalAddr().(*net.UDPAddr).Port
	runAuthz(t, []authzCase{{
		name: "POST snmp/testtrap", allowed: adUp, ok: http.StatusOK,
		// Another customer's policy sends no traps: it never reaches
		// customer 1's receivers.
		foreign: http.StatusConflict, foreignCode: wnms.Conflict,
		request: func(t *testing.T, f *authzFixture, _ authzTarget) (string, string, any) {
			storeSNMPPolicy(t, f.E, 1, trapPolicy(v2cReceiver(port)))
			return "POST", testTrapPath, nil
		},
	}})
}

// The policy PUT tells the SNMP agent at once.
func TestSNMPPolicyChangeIsAnnounced(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	calls := 0
	e.API.OnSNMPPolicyChange = func() { calls++ }
	e.Admin.Expect(http.StatusOK, "PUT", policiesSNMPPath, policiesFullSNMP())
	bad := policiesFullSNMP()
	bad.SNMPSettings.VersionThreeSettings.EngineID = "xyz"
	r := e.Admin.Do("PUT", policiesSNMPPath, bad)
	if r.Status != http.StatusBadRequest || calls != 1 || !strings.Contains(string(r.Body), "engineId") {
		t.Fatalf("calls %d after a good and a bad PUT; %d %s", calls, r.Status, r.Body)
	}
}

func expectError(t *testing.T, r *apitest.Response, status int, code, text string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code || !strings.Contains(string(r.Body), text) {
		t.Fatalf("status %d %s, want %d %s saying %q: %s", r.Status, r.ErrorCode(), status, code, text, r.Body)
	}
}
