package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/snmp/snmptest"
)

// call makes a JSON API call (do) and returns status and body.
func call(t *testing.T, method, url string, ck *http.Cookie, body any) (int, []byte) {
	t.Helper()
	var b []byte
	if body != nil {
		b = jsonBody(body)
	}
	a := do(t, method, url, ck, "application/json", b)
	return a.status, []byte(a.body)
}

// TestSNMPEndToEnd runs the real server with its agent and trap sender
// against net-snmp: the policy PUT over HTTP reaches the agent without a
// restart, and coldStart, AP up/down and user-locked traps arrive at a
// real snmptrapd over SNMPv3 (SHA-256, AES).
func TestSNMPEndToEnd(t *testing.T) {
	const engine = "0x80003a8c04776e6d73653265"
	d := snmptest.StartTrapd(t, "createUser -e "+engine+" nms SHA-256 trap-auth-pw AES trap-priv-pw\nauthUser log nms\n")
	env := snmptest.Env(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	l, _, _, stop := bootServe(t, nil, "--data", data, "--ap-timeout", "1s")
	key := struct{ KeyID, KeyValue string }{}
	b, err := os.ReadFile(filepath.Join(data, "bootstrap-key.json"))
	if err != nil || json.Unmarshal(b, &key) != nil {
		t.Fatalf("bootstrap key: %v %s", err, b)
	}
	base := "http://" + l.API
	ck := login(t, base, key.KeyID, key.KeyValue)
	api := base + "/new/webservice/V5"

	// The agent answers nothing while the policy (the default) says so.
	get := func(args ...string) (string, error) {
		return snmptest.Run(t, env, "snmpget", append([]string{"-On", "-t", "1", "-r", "0"}, append(args, l.SNMPAgent, ".1.3.6.1.2.1.1.5.0")...)...)
	}
	if out, err := get("-v2c", "-c", "public"); err == nil {
		t.Fatalf("the default policy answered a query: %s", out)
	}
	policy := map[string]any{
		"policyType": "SNMP_POLICY", "snmpIntegrationEnabled": true,
		"snmpSettings": map[string]any{
			"versionOneTwoSettings": map[string]any{"enableGets": true, "communityString": "n0c-read"},
			"versionThreeSettings": map[string]any{"enableGets": true, "userName": "monitor", "authenticationPassword": "agent-auth-pw",
				"privacyPassword": "agent-priv-pw", "authenticationProtocol": "SHA512", "privacyProtocol": "AES256", "engineId": engine},
			"getEnabled": true, "trapEnabled": true,
		},
		"snmpMib": map[string]any{"snmpMibII": map[string]any{"systemName": "wnms-e2e", "systemContact": "noc", "systemLocation": "lab"},
			"hostResourcesMibEnabled": true, "interfaceMibEnabled": true, "mibIIEnabled": true},
		"snmpServerlist": []any{map[string]any{"enableTraps": true, "trapPort": d.Port, "protocolVersion": "V3", "userName": "nms",
			"authenticationPassword": "trap-auth-pw", "privacyPassword": "trap-priv-pw", "authenticationType": "SHA256",
			"privacyProtocol": "AES", "destIpAddress": "127.0.0.1"}},
	}
	if st, body := call(t, "PUT", api+"/configuration/global/snmp", ck, policy); st != 200 {
		t.Fatalf("PUT policy: %d %s", st, body)
	}
	for _, args := range [][]string{
		{"-v2c", "-c", "n0c-read"},
		{"-v3", "-l", "authPriv", "-u", "monitor", "-a", "SHA-512", "-A", "agent-auth-pw", "-x", "AES256", "-X", "agent-priv-pw"},
	} {
		if out, err := get(args...); err != nil || !strings.Contains(out, `STRING: "wnms-e2e"`) {
			t.Errorf("snmpget %v after the PUT: %v %s", args, err, out)
		}
	}

	// Test trap, AP up then down (the AP timeout is 1 s), user locked.
	if st, body := call(t, "POST", api+"/configuration/global/snmp/testtrap", ck, nil); st != 200 || !strings.Contains(string(body), `"sent":true`) {
		t.Fatalf("testtrap: %d %s", st, body)
	}
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.1")
	ap := []any{map[string]any{"macaddress": "00:11:74:00:0e:01", "name": "ap-e2e", "radios": []any{map[string]any{"macaddress": "00:11:74:00:0e:02", "channel": 36}}}}
	if st, body := call(t, "POST", api+"/ingest/aps", ck, ap); st != 200 {
		t.Fatalf("ingest AP: %d %s", st, body)
	}
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.3", `STRING: "ap-e2e"`, `STRING: "00:11:74:00:0E:01"`, `.1.3.6.1.4.1.61550.1.2.3 = STRING: "/Unknown"`)
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.2")
	user := map[string]any{"user": map[string]any{"loginId": "mallory", "role": "VIEWER", "userType": "LOCAL"}, "password": "right-password-1"}
	if st, body := call(t, "PUT", api+"/users", ck, user); st != 200 {
		t.Fatalf("create user: %d %s", st, body)
	}
	for i := 0; i < 5; i++ {
		call(t, "POST", base+"/new/webservice/login/e2e/600", nil,
			map[string]any{"type": "usernamepasswordcredentials", "username": "mallory", "password": "wrong-" + strconv.Itoa(i)})
	}
	d.WaitFor(t, "OID: .1.3.6.1.4.1.61550.0.5", `STRING: "mallory"`)

	// A restart sends coldStart to the receivers of the stored policy.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	l2, _, _, _ := bootServe(t, nil, "--data", data)
	d.WaitFor(t, "OID: .1.3.6.1.6.3.1.1.5.1")

	// The counters moved.
	_, metrics := call(t, "GET", "http://"+l2.Metrics+"/metrics", nil, nil)
	for _, want := range []string{`wnms_snmp_traps_total{kind="coldStart",result="sent"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
