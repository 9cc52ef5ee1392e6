package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// roleUser creates an API user of role on the server at addr (as ck, a
// SUPERUSER), makes it a key, and returns a session of it.
func roleUser(t *testing.T, addr string, ck *http.Cookie, login, role string) *http.Cookie {
	t.Helper()
	base := "http://" + addr + "/new/webservice"
	u := do(t, "PUT", base+"/V5/users", ck, "application/json", jsonBody(map[string]any{"user": map[string]any{
		"loginId": login, "role": role, "userType": "API",
		"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 0}}}}))
	if u.status != 200 {
		t.Fatalf("user %s on %s: %d %s", login, addr, u.status, u.body)
	}
	var made struct{ UserID int64 }
	json.Unmarshal([]byte(u.body), &made)
	k := do(t, "PUT", base+"/V5/apikeys", ck, "application/json", jsonBody(map[string]any{"userId": made.UserID}))
	if k.status != 200 {
		t.Fatalf("key of %s on %s: %d %s", login, addr, k.status, k.body)
	}
	var key struct{ KeyID, KeyValue string }
	json.Unmarshal([]byte(k.body), &key)
	return session(t, addr, key.KeyID, key.KeyValue)
}

// TestClusterForwardKeepsCallerRights runs a parent and a child as real
// processes and proves that a call forwarded with nodeid runs on the child
// with the caller's rights, never the parent key's (a SUPERUSER on the
// child): for every role, each call on users, API keys, policies and
// templates answers through the parent exactly what the same role gets
// directly on the child. Before the role cap, an OPERATOR created a
// SUPERUSER on a child, an ADMINISTRATOR minted a key for the child's
// SUPERUSER, and a VIEWER ended the parent's own session with the child.
func TestClusterForwardKeepsCallerRights(t *testing.T) {
	dir := t.TempDir()
	childKey := [2]string{"rights-child-key", "rights-child-value-0123456789"}
	child := startProc(t, freeTCPPort(t), "--data", filepath.Join(dir, "child"), "--server-id", "2",
		"--bootstrap-key-id", childKey[0], "--bootstrap-key-value", childKey[1])
	// The parent's key on the child is made for a cluster parent, beside
	// the running child, as docs/operations.md ("Cluster") says to.
	code, out, stderr := runCLI([]string{"apikey", "create", "--data", filepath.Join(dir, "child"), "--login", "parent",
		"--role", "SUPERUSER", "--cluster-parent"}, nil)
	var parentKey struct {
		KeyID, KeyValue string
		ClusterParent   bool
	}
	if err := json.Unmarshal([]byte(out), &parentKey); code != 0 || err != nil || !parentKey.ClusterParent {
		t.Fatalf("apikey create --cluster-parent: exit %d, %s %s", code, out, stderr)
	}
	file := filepath.Join(dir, "cluster.json")
	cfg := map[string]any{"children": []any{map[string]any{"childId": 2, "name": "Campus", "url": "http://" + child.api,
		"keyId": parentKey.KeyID, "keyValue": parentKey.KeyValue, "timeoutSeconds": 10}}}
	if err := os.WriteFile(file, jsonBody(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := startProc(t, "127.0.0.1:0", "--data", filepath.Join(dir, "parent"), "--cluster-config", file, "--server-id", "1",
		"--bootstrap-key-id", "rights-parent-key", "--bootstrap-key-value", "rights-parent-value-0123456789")
	parentSU := session(t, parent.api, "rights-parent-key", "rights-parent-value-0123456789")
	childSU := session(t, child.api, childKey[0], childKey[1])
	viaBase := "http://" + parent.api + "/new/webservice"
	directBase := "http://" + child.api + "/new/webservice"

	// The child's own SUPERUSER (user 1, the bootstrap admin) and a
	// VIEWER to act on.
	var target struct{ UserID int64 }
	tv := do(t, "PUT", directBase+"/V5/users", childSU, "application/json", jsonBody(map[string]any{"user": map[string]any{
		"loginId": "target-viewer", "role": "VIEWER", "userType": "API",
		"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 0}}}}))
	json.Unmarshal([]byte(tv.body), &target)

	snmp := do(t, "GET", directBase+"/V5/configuration/global/snmp", childSU, "", nil)
	if snmp.status != 200 {
		t.Fatalf("snmp policy: %d %s", snmp.status, snmp.body)
	}
	template := func(name string) []byte {
		return jsonBody(map[string]any{"type": "clientconntestprofile", "templateName": name, "ssid": "Guest", "frequencyBand": "ANY"})
	}
	newUser := func(login, role string) []byte {
		return jsonBody(map[string]any{"user": map[string]any{"loginId": login, "role": role, "userType": "API",
			"allowedLocations": []any{map[string]any{"type": "locallocationid", "id": 0}}}})
	}
	type call struct {
		name, method, path string
		body               func(how string) []byte // how: "via" or "direct", to keep names apart
	}
	calls := []call{
		{"list users", "GET", "/V5/users", nil},
		{"create a SUPERUSER", "PUT", "/V5/users", func(how string) []byte { return newUser("su-"+how, "SUPERUSER") }},
		{"create an ADMINISTRATOR", "PUT", "/V5/users", func(how string) []byte { return newUser("ad-"+how, "ADMINISTRATOR") }},
		{"create a VIEWER", "PUT", "/V5/users", func(how string) []byte { return newUser("vi-"+how, "VIEWER") }},
		{"list API keys", "GET", "/V5/apikeys", nil},
		{"key for the child's SUPERUSER", "PUT", "/V5/apikeys", func(string) []byte { return []byte(`{"userId":1}`) }},
		{"key for a VIEWER", "PUT", "/V5/apikeys", func(string) []byte { return jsonBody(map[string]any{"userId": target.UserID}) }},
		{"read the SNMP policy", "GET", "/V5/configuration/global/snmp", nil},
		{"replace the SNMP policy", "PUT", "/V5/configuration/global/snmp", func(string) []byte { return []byte(snmp.body) }},
		{"list templates", "GET", "/V5/templates/CL_CONN_TEST_PROFILE?locationid=0", nil},
		{"create a template", "PUT", "/V5/templates?locationid=0", func(how string) []byte { return template("t-" + how) }},
	}
	for _, role := range []string{"VIEWER", "OPERATOR", "ADMINISTRATOR", "SUPERUSER"} {
		t.Run(role, func(t *testing.T) {
			via := roleUser(t, parent.api, parentSU, "p-"+role, role)
			direct := roleUser(t, child.api, childSU, "c-"+role, role)
			for _, c := range calls {
				var vb, db []byte
				ct := ""
				if c.body != nil {
					vb, db, ct = c.body("via-"+role), c.body("direct-"+role), "application/json"
				}
				sep := "?"
				if strings.Contains(c.path, "?") {
					sep = "&"
				}
				got := do(t, c.method, viaBase+c.path+sep+"nodeid=2", via, ct, vb)
				want := do(t, c.method, directBase+c.path, direct, ct, db)
				if got.status != want.status || got.errorCode() != want.errorCode() {
					t.Errorf("%s as %s: through the parent %d %s, directly %d %s", c.name, role, got.status, got.body, want.status, want.body)
				}
			}
		})
	}

	// The child's audit log names the user the parent forwarded for, and
	// how the call came; the parent's records the call it forwarded.
	var childLog struct {
		AuditRecords []struct {
			Method, ResourceType string
			Status               int
			Actor                struct{ LoginID, Role, Via string }
		}
	}
	r := do(t, "GET", directBase+"/V5/auditlog?loginid=p-ADMINISTRATOR@1&resourcetype=templates", childSU, "", nil)
	json.Unmarshal([]byte(r.body), &childLog)
	if len(childLog.AuditRecords) != 1 || childLog.AuditRecords[0].Actor.Via != "cluster:1" ||
		childLog.AuditRecords[0].Actor.Role != "ADMINISTRATOR" || childLog.AuditRecords[0].Status != 200 {
		t.Errorf("the child's record of a forwarded change: %d %s", r.status, r.body)
	}
	r = do(t, "GET", viaBase+"/V5/auditlog?loginid=p-ADMINISTRATOR&resourcetype=templates", parentSU, "", nil)
	json.Unmarshal([]byte(r.body), &childLog)
	if len(childLog.AuditRecords) != 1 || childLog.AuditRecords[0].Actor.Via != "http" || childLog.AuditRecords[0].Status != 200 {
		t.Errorf("the parent's record of the call it forwarded: %d %s", r.status, r.body)
	}

	// The three escalations of old, explicitly.
	op := roleUser(t, parent.api, parentSU, "p-op2", "OPERATOR")
	if r := do(t, "PUT", viaBase+"/V5/users?nodeid=2", op, "application/json", newUser("escalated", "SUPERUSER")); r.status != 403 {
		t.Errorf("OPERATOR creating a SUPERUSER on the child: %d %s", r.status, r.body)
	}
	ad := roleUser(t, parent.api, parentSU, "p-ad2", "ADMINISTRATOR")
	if r := do(t, "PUT", viaBase+"/V5/apikeys?nodeid=2", ad, "application/json", []byte(`{"userId":1}`)); r.status != 403 {
		t.Errorf("ADMINISTRATOR minting a key for the child's SUPERUSER: %d %s", r.status, r.body)
	}
	vw := roleUser(t, parent.api, parentSU, "p-vw2", "VIEWER")
	for _, p := range []string{"/V5/logout?nodeid=2", "/V5/login/keepsessionalive?nodeid=2",
		"/login/key/x/600?nodeid=2"} {
		r := do(t, "POST", viaBase+p, vw, "application/json", []byte(`{"type":"apikeycredentials","keyId":"a","keyValue":"b"}`))
		if r.status != 400 || r.errorCode() != "INVALID_PARAMETER" {
			t.Errorf("POST %s: %d %s, want 400 INVALID_PARAMETER", p, r.status, r.body)
		}
	}
	// The parent's session with the child still works.
	if r := do(t, "GET", viaBase+"/V2/locations/tree?nodeid=2", parentSU, "", nil); r.status != 200 {
		t.Errorf("the parent's child session after the refused logout: %d %s", r.status, r.body)
	}
	// /readyz says ready or not to anyone; the children's names, URLs and
	// errors only to a caller with a session.
	anon := do(t, "GET", "http://"+parent.api+"/readyz", nil, "", nil)
	if anon.status != 200 || strings.Contains(anon.body, child.api) || strings.Contains(anon.body, "Campus") {
		t.Errorf("/readyz without a session: %d %s", anon.status, anon.body)
	}
	if signed := do(t, "GET", "http://"+parent.api+"/readyz", vw, "", nil); !strings.Contains(signed.body, child.api) {
		t.Errorf("/readyz with a session: %d %s", signed.status, signed.body)
	}
	// Only the cluster parent's key may send the forwarding headers: a
	// client of the child's own sending them is refused, and on the
	// parent's key a cap lowers its rights and never raises them.
	parentOnChild := session(t, child.api, parentKey.KeyID, parentKey.KeyValue)
	for _, c := range []struct {
		ck          *http.Cookie
		header, cap string
		want        int
	}{
		{parentOnChild, "X-Wnms-Role-Cap", "VIEWER", 403}, {parentOnChild, "X-Wnms-Role-Cap", "SUPERUSER", 200},
		{parentOnChild, "X-Wnms-Role-Cap", "nonsense", 403},
		{childSU, "X-Wnms-Role-Cap", "VIEWER", 400}, {childSU, "X-Wnms-Role-Cap", "SUPERUSER", 400},
		{childSU, "X-Wnms-Acting-For", "someone@1", 400},
	} {
		req, _ := http.NewRequest("GET", directBase+"/V5/apikeys", nil)
		req.AddCookie(c.ck)
		req.Header.Set(c.header, c.cap)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.header, c.cap, resp.StatusCode, c.want)
		}
	}
}
