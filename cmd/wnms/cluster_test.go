package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/store/storetest"
)

// TestMain lets the test binary be wnms itself: with WNMS_TEST_AS_WNMS=1
// it runs main, so tests can start real, separate server processes
// without a build step.
func TestMain(m *testing.M) {
	if os.Getenv("WNMS_TEST_AS_WNMS") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// proc is a wnms serve process.
type proc struct {
	cmd       *exec.Cmd
	api       string // host:port
	analytics string
	metrics   string // host:port of /metrics
	stderr    *syncBuf
	done      chan struct{}
}

func freeTCPPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startProc runs `wnms serve` on listen with args and waits until it
// serves.
func startProc(t testing.TB, listen string, args ...string) *proc {
	t.Helper()
	args = append([]string{"serve", "--listen", listen, "--analytics-listen", "127.0.0.1:0", "--snmp-agent-listen", "off",
		"--metrics-listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "WNMS_TEST_AS_WNMS=1")
	p := &proc{cmd: cmd, stderr: &syncBuf{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan [3]string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.Write([]byte(line + "\n"))
			var m struct{ Msg, API, Analytics, Metrics string }
			if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "wnms serving" {
				ready <- [3]string{m.API, m.Analytics, m.Metrics}
			}
		}
	}()
	go func() { cmd.Wait(); pw.Close(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	select {
	case a := <-ready:
		p.api, p.analytics, p.metrics = a[0], a[1], a[2]
	case <-p.done:
		t.Fatalf("wnms %v exited:\n%s", args, p.stderr.String())
	case <-time.After(90 * time.Second): // a loaded machine, the race detector: a start may take long
		t.Fatalf("wnms %v did not start:\n%s", args, p.stderr.String())
	}
	return p
}

func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// session logs into a server with a key and returns the cookie.
func session(t testing.TB, addr, keyID, keyValue string) *http.Cookie {
	return login(t, "http://"+addr, keyID, keyValue)
}

type answer struct {
	status int
	body   string
	header http.Header
}

func (a answer) errorCode() string {
	var e struct {
		Errors []struct{ ErrorCode, Message string } `json:"errors"`
	}
	json.Unmarshal([]byte(a.body), &e)
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].ErrorCode
}

func do(t testing.TB, method, url string, ck *http.Cookie, contentType string, body []byte) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if ck != nil {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b), resp.Header}
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestClusterForwarding runs a parent and two children as real processes
// and proves nodeid forwarding: reads, writes and uploads reach the named
// child and its answer comes back unchanged; the parent's roles and scope
// apply first; a child that dies is named in a 502; a child rebuilt from
// scratch (its sessions gone) is logged into again without help.
func TestClusterForwarding(t *testing.T) {
	dir := t.TempDir()
	keys := map[int][2]string{1: {"child1-key", "child1-value-0123456789"}, 2: {"child2-key", "child2-value-0123456789"}}
	childAddr := map[int]string{}
	children := map[int]*proc{}
	startChild := func(n int, data string) *proc {
		if childAddr[n] == "" {
			childAddr[n] = freeTCPPort(t)
		}
		return startProc(t, childAddr[n], "--data", data, "--bootstrap-key-id", keys[n][0], "--bootstrap-key-value", keys[n][1],
			"--bootstrap-key-cluster-parent", "--server-id", strconv.Itoa(n))
	}
	for n := 1; n <= 2; n++ {
		children[n] = startChild(n, filepath.Join(dir, fmt.Sprintf("child%d", n)))
	}
	file := filepath.Join(dir, "cluster.json")
	var entries []map[string]any
	for n := 1; n <= 2; n++ {
		entries = append(entries, map[string]any{"childId": n, "name": fmt.Sprintf("Campus %d", n),
			"url": "http://" + childAddr[n], "keyId": keys[n][0], "keyValue": keys[n][1], "timeoutSeconds": 5,
			"analyticsUrl": "http://" + children[n].analytics})
	}
	if err := os.WriteFile(file, jsonBody(map[string]any{"children": entries}), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := startProc(t, "127.0.0.1:0", "--data", filepath.Join(dir, "parent"), "--cluster-config", file, "--server-id", "100",
		"--bootstrap-key-id", "parent-key", "--bootstrap-key-value", "parent-value-0123456789")
	admin := session(t, parent.api, "parent-key", "parent-value-0123456789")
	api := "http://" + parent.api + "/new/webservice"

	// A folder made on child 1 directly shows in child 1's tree through
	// the parent, and not in the parent's own.
	c1 := session(t, children[1].api, keys[1][0], keys[1][1])
	made := do(t, "PUT", "http://"+children[1].api+"/new/webservice/V2/locations", c1, "application/json",
		jsonBody(map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location": map[string]any{"type": "folderlocation", "name": "Only On Child One"}}))
	if made.status != 200 {
		t.Fatalf("folder on child 1: %d %s", made.status, made.body)
	}
	direct := do(t, "GET", "http://"+children[1].api+"/new/webservice/V2/locations/tree", c1, "", nil)
	via := do(t, "GET", api+"/V2/locations/tree?nodeid=1", admin, "", nil)
	if via.status != 200 || !strings.Contains(via.body, "Only On Child One") || via.body != direct.body {
		t.Fatalf("tree of child 1 through the parent: %d %s\nwant %s", via.status, via.body, direct.body)
	}
	if own := do(t, "GET", api+"/V2/locations/tree", admin, "", nil); strings.Contains(own.body, "Only On Child One") {
		t.Fatal("the parent's own tree shows child 1's folder")
	}

	// A write through the parent lands on child 2 only.
	w := do(t, "PUT", api+"/V2/locations?nodeid=2", admin, "application/json",
		jsonBody(map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location": map[string]any{"type": "folderlocation", "name": "Made Through The Parent"}}))
	if w.status != 200 {
		t.Fatalf("write through the parent: %d %s", w.status, w.body)
	}
	c2 := session(t, children[2].api, keys[2][0], keys[2][1])
	if tree := do(t, "GET", "http://"+children[2].api+"/new/webservice/V2/locations/tree", c2, "", nil); !strings.Contains(tree.body, "Made Through The Parent") {
		t.Fatalf("child 2 lacks the folder written through the parent: %s", tree.body)
	}
	var folder struct {
		ID struct{ ID int64 } `json:"id"`
	}
	json.Unmarshal([]byte(w.body), &folder)
	floor := do(t, "PUT", api+"/V2/locations?nodeid=2", admin, "application/json",
		jsonBody(map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": folder.ID.ID},
			"location": map[string]any{"type": "floorlocation", "name": "Floor 1"}}))
	var fl struct {
		ID struct{ ID int64 } `json:"id"`
	}
	json.Unmarshal([]byte(floor.body), &fl)

	// A layout, then an upload (multipart, a PNG) through the parent.
	floorQ := "nodeid=2&locationid=" + strconv.FormatInt(fl.ID.ID, 10)
	if r := do(t, "POST", api+"/V5/layouts?"+floorQ, admin, "application/json",
		[]byte(`{"type":"floorlayout","length":40,"width":25,"unit":"METER"}`)); r.status != 204 {
		t.Fatalf("layout through the parent: %d %s", r.status, r.body)
	}
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	part, _ := mw.CreateFormFile("uploadedFile", "plan.png")
	part.Write(pngBytes(t))
	mw.Close()
	up := do(t, "POST", api+"/V5/layouts/image?"+floorQ, admin, mw.FormDataContentType(), mp.Bytes())
	if up.status != 200 || !strings.Contains(up.body, `"imageKey"`) {
		t.Fatalf("upload through the parent: %d %s", up.status, up.body)
	}
	link := do(t, "GET", "http://"+children[2].api+"/new/webservice/V5/layouts/image?locationid="+strconv.FormatInt(fl.ID.ID, 10), c2, "", nil)
	img := do(t, "GET", "http://"+children[2].api+"/new/"+strings.TrimSpace(link.body), c2, "", nil)
	if img.status != 200 || img.body != string(pngBytes(t)) {
		t.Fatalf("child 2 lacks the uploaded image: %d %q", img.status, link.body)
	}

	// An analytics call with child 2's server_id goes to child 2's
	// analytics listener; with the parent's own, it stays.
	zone := "/api/v1.14/analytics/graphs/locationtracking/zones/ap/config?node_type=location&location_id=" + strconv.FormatInt(fl.ID.ID, 10)
	viaParent := do(t, "GET", "http://"+parent.analytics+zone+"&server_id=2", admin, "", nil)
	onChild := do(t, "GET", "http://"+children[2].analytics+zone+"&server_id=2", c2, "", nil)
	if viaParent.status != 200 || viaParent.body != onChild.body || !strings.Contains(viaParent.body, `"length":40`) {
		t.Errorf("analytics through the parent: %d %s\nwant %s", viaParent.status, viaParent.body, onChild.body)
	}
	if own := do(t, "GET", "http://"+parent.analytics+zone+"&server_id=100", admin, "", nil); own.status == 200 {
		t.Errorf("the parent answered a zone of child 2's floor id as its own: %s", own.body)
	}

	// The parent's roles and scope come first: a VIEWER reads but cannot
	// write on a child; a user scoped below the root reaches no child.
	newUser := func(login, role string, locations []map[string]any) *http.Cookie {
		u := map[string]any{"user": map[string]any{"loginId": login, "role": role, "userType": "LOCAL"}, "password": "a-good-password-1"}
		if locations != nil {
			u["user"].(map[string]any)["allowedLocations"] = locations
		}
		if r := do(t, "PUT", api+"/V5/users", admin, "application/json", jsonBody(u)); r.status != 200 {
			t.Fatalf("user %s: %d %s", login, r.status, r.body)
		}
		r := do(t, "POST", api+"/login/cluster-test/600", nil, "application/json",
			jsonBody(map[string]any{"type": "usernamepasswordcredentials", "username": login, "password": "a-good-password-1"}))
		for _, ck := range parseCookies(r.header) {
			if ck.Name == "JSESSIONID" {
				return ck
			}
		}
		t.Fatalf("login %s: %d %s", login, r.status, r.body)
		return nil
	}
	viewer := newUser("viewer1", "VIEWER", nil)
	if r := do(t, "GET", api+"/V2/locations/tree?nodeid=1", viewer, "", nil); r.status != 200 {
		t.Errorf("VIEWER read on a child: %d %s", r.status, r.body)
	}
	if r := do(t, "PUT", api+"/V2/locations?nodeid=1", viewer, "application/json",
		jsonBody(map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location": map[string]any{"type": "folderlocation", "name": "Viewer Was Here"}})); r.status != 403 || r.errorCode() != "ACCESS_DENIED" {
		t.Errorf("VIEWER write on a child: %d %s", r.status, r.body)
	}
	if tree := do(t, "GET", "http://"+children[1].api+"/new/webservice/V2/locations/tree", c1, "", nil); strings.Contains(tree.body, "Viewer Was Here") {
		t.Error("a VIEWER on the parent wrote on child 1")
	}
	site := do(t, "PUT", api+"/V2/locations", admin, "application/json",
		jsonBody(map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location": map[string]any{"type": "folderlocation", "name": "Parent Site"}}))
	var siteID struct {
		ID struct{ ID int64 } `json:"id"`
	}
	json.Unmarshal([]byte(site.body), &siteID)
	scoped := newUser("scoped1", "ADMINISTRATOR", []map[string]any{{"type": "locallocationid", "id": siteID.ID.ID}})
	if r := do(t, "GET", api+"/V2/locations/tree?nodeid=1", scoped, "", nil); r.status != 403 || r.errorCode() != "LOCATION_ACCESS_DENIED" {
		t.Errorf("scoped user on a child: %d %s", r.status, r.body)
	}

	// Bad nodeid values.
	for q, code := range map[string]string{"nodeid=9": "INVALID_PARAMETER", "nodeid=-1": "INVALID_PARAMETER", "nodeid=x": "INVALID_PARAMETER"} {
		if r := do(t, "GET", api+"/V2/locations/tree?"+q, admin, "", nil); r.status != 400 || r.errorCode() != code {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}

	// Child 2 dies: calls to it fail naming it; the parent stays ready
	// and says which child is down.
	children[2].kill()
	if r := do(t, "GET", api+"/V2/locations/tree?nodeid=2", admin, "", nil); r.status != 502 || r.errorCode() != "CHILD_UNREACHABLE" ||
		!strings.Contains(r.body, "child 2 (Campus 2)") {
		t.Errorf("dead child: %d %s", r.status, r.body)
	}
	ready := do(t, "GET", "http://"+parent.api+"/readyz", admin, "", nil)
	if ready.status != 200 || !strings.Contains(ready.body, `"childId":2,"name":"Campus 2","url":"http://`+childAddr[2]+`","up":false`) {
		t.Errorf("readyz with a dead child: %d %s", ready.status, ready.body)
	}

	// Child 1 is rebuilt: a fresh data directory, the same key. The
	// parent's session there is gone; the parent logs in again itself.
	children[1].kill()
	children[1] = startChild(1, filepath.Join(dir, "child1-rebuilt"))
	if r := do(t, "GET", api+"/V5/users/current?nodeid=1", admin, "", nil); r.status != 200 || !strings.Contains(r.body, `"loginId":"admin"`) {
		t.Errorf("after the child's rebuild: %d %s", r.status, r.body)
	}
	info := do(t, "GET", api+"/V7/system/info", admin, "", nil)
	if !strings.Contains(info.body, `"clusterChildren":[{"childId":1,"name":"Campus 1"`) {
		t.Errorf("system info: %s", info.body)
	}
	metrics := do(t, "GET", "http://"+parent.metrics+"/metrics", nil, "", nil)
	for _, want := range []string{`wnms_cluster_child_calls_total{child="1",result="ok"}`, `wnms_cluster_child_calls_total{child="2",result="unreachable"} 1`,
		`wnms_cluster_child_up{child="2"} 0`, `wnms_cluster_child_up{child="1"} 1`, `wnms_cluster_child_call_duration_seconds_count{child="1"}`} {
		if !strings.Contains(metrics.body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(parent.stderr.String(), keys[1][1]) || strings.Contains(parent.stderr.String(), keys[2][1]) {
		t.Error("the parent logged a child's key value")
	}
}

func parseCookies(h http.Header) []*http.Cookie {
	return (&http.Response{Header: h}).Cookies()
}

// pngBytes is a small valid PNG.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	// 1x1 transparent PNG.
	const b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	out := make([]byte, 0, 80)
	dec := json.NewDecoder(strings.NewReader(`"` + b64 + `"`))
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestClusterConfigAtStartAndOnSIGHUP: a bad cluster file stops the start
// with a message naming the line or the child; a changed file is picked
// up on SIGHUP, and a bad one then keeps the previous configuration.
func TestClusterConfigAtStartAndOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.json")
	for body, want := range map[string]string{
		"{\"children\": [\n  {\"childId\": 1 \"url\": \"http://a:1\"}\n]}":                                                                                                "line 2",
		`{"children": [{"childId": 7, "name": "East", "url": "gopher://a:1", "keyId": "k", "keyValue": "v-secret-1"}]}`:                                                   "child 7 (East): url must be http(s)",
		`{"children": [{"childId": 7, "url": "http://a:1", "keyId": "k", "keyValue": "v-secret-1"}, {"childId": 7, "url": "http://b:1", "keyId": "k", "keyValue": "v"}]}`: "childId 7 appears twice",
		`{"children": [{"childId": 1, "url": "http://a:1", "keyId": "k", "keyValue": "v-secret-1"}]}`:                                                                     "has this server's serverID 1",
	} {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI([]string{"serve", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0",
			"--analytics-listen", "127.0.0.1:0", "--snmp-agent-listen", "off", "--metrics-listen", "off", "--cluster-config", file}, nil)
		if code == 0 || !strings.Contains(stderr, want) || strings.Contains(stderr, "v-secret-1") {
			t.Errorf("cluster file %s: exit %d, %s", body, code, stderr)
		}
	}

	childAddr := freeTCPPort(t)
	startProc(t, childAddr, "--data", filepath.Join(dir, "child"), "--bootstrap-key-id", "ck", "--bootstrap-key-value", "child-value-0123456789",
		"--bootstrap-key-cluster-parent")
	write := func(children ...map[string]any) {
		if err := os.WriteFile(file, jsonBody(map[string]any{"children": children}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write()
	parent := startProc(t, "127.0.0.1:0", "--data", filepath.Join(dir, "parent"), "--cluster-config", file,
		"--bootstrap-key-id", "pk", "--bootstrap-key-value", "parent-value-0123456789")
	admin := session(t, parent.api, "pk", "parent-value-0123456789")
	url := "http://" + parent.api + "/new/webservice/V5/users/current?nodeid=3"
	if r := do(t, "GET", url, admin, "", nil); r.status != 400 {
		t.Fatalf("before the reload: %d %s", r.status, r.body)
	}
	write(map[string]any{"childId": 3, "name": "New", "url": "http://" + childAddr, "keyId": "ck", "keyValue": "child-value-0123456789"})
	parent.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := do(t, "GET", url, admin, "", nil)
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child 3 never reachable after SIGHUP: %d %s\n%s", r.status, r.body, parent.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.WriteFile(file, []byte("{not json"), 0o600)
	parent.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(parent.stderr.String(), "cluster config not reloaded"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no word of the bad reload:\n%s", parent.stderr.String())
		}
	}
	if r := do(t, "GET", url, admin, "", nil); r.status != 200 {
		t.Errorf("after a bad reload: %d %s", r.status, r.body)
	}
}

// TestClusterFanOut: a session opened with getClusterChildrenData=true
// sees the parent and both children in one answer: the location tree with
// each child's tree under the parent's root, a paged list with summed
// totalCount, remote location ids naming their child; the users calls
// stay the parent's; a dead child fails the call, naming it.
func TestClusterFanOut(t *testing.T) {
	dir := t.TempDir()
	var entries []map[string]any
	children := map[int]*proc{}
	for n := 1; n <= 2; n++ {
		addr := freeTCPPort(t)
		kid, kv := fmt.Sprintf("c%d-key", n), fmt.Sprintf("c%d-value-0123456789", n)
		children[n] = startProc(t, addr, "--data", filepath.Join(dir, fmt.Sprintf("c%d", n)), "--bootstrap-key-id", kid, "--bootstrap-key-value", kv,
			"--bootstrap-key-cluster-parent")
		entries = append(entries, map[string]any{"childId": n, "name": fmt.Sprintf("Campus %d", n), "url": "http://" + addr, "keyId": kid, "keyValue": kv})
		ck := session(t, addr, kid, kv)
		base := "http://" + addr + "/new/webservice"
		do(t, "PUT", base+"/V2/locations", ck, "application/json", jsonBody(map[string]any{
			"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location":       map[string]any{"type": "folderlocation", "name": fmt.Sprintf("Site of child %d", n)}}))
		ap := []any{map[string]any{"macaddress": fmt.Sprintf("00:11:74:00:0c:0%d", n), "name": fmt.Sprintf("ap-child-%d", n)}}
		if r := do(t, "POST", base+"/V5/ingest/aps", ck, "application/json", jsonBody(ap)); r.status != 200 {
			t.Fatalf("AP on child %d: %d %s", n, r.status, r.body)
		}
	}
	file := filepath.Join(dir, "cluster.json")
	os.WriteFile(file, jsonBody(map[string]any{"children": entries}), 0o600)
	parent := startProc(t, "127.0.0.1:0", "--data", filepath.Join(dir, "parent"), "--cluster-config", file, "--server-id", "100",
		"--bootstrap-key-id", "pk", "--bootstrap-key-value", "parent-value-0123456789")
	api := "http://" + parent.api + "/new/webservice"
	plain := session(t, parent.api, "pk", "parent-value-0123456789")
	do(t, "PUT", api+"/V2/locations", plain, "application/json", jsonBody(map[string]any{
		"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location":       map[string]any{"type": "folderlocation", "name": "Site of the parent"}}))
	do(t, "POST", api+"/V5/ingest/aps", plain, "application/json", jsonBody([]any{map[string]any{"macaddress": "00:11:74:00:0c:00", "name": "ap-parent"}}))

	r := do(t, "POST", api+"/login/key/fanout/600?getClusterChildrenData=true", nil, "application/json",
		jsonBody(map[string]any{"type": "apikeycredentials", "keyId": "pk", "keyValue": "parent-value-0123456789"}))
	var all *http.Cookie
	for _, ck := range parseCookies(r.header) {
		if ck.Name == "JSESSIONID" {
			all = ck
		}
	}
	if all == nil {
		t.Fatalf("fan-out login: %d %s", r.status, r.body)
	}

	tree := do(t, "GET", api+"/V2/locations/tree", all, "", nil)
	var tr struct {
		Locations map[string]struct {
			Name     string
			ID       map[string]any `json:"id"`
			ParentID map[string]any `json:"parentId"`
		} `json:"locations"`
	}
	if err := json.Unmarshal([]byte(tree.body), &tr); err != nil || tree.status != 200 {
		t.Fatalf("tree: %d %s", tree.status, tree.body)
	}
	names := map[string]map[string]any{}
	for _, l := range tr.Locations {
		names[l.Name] = l.ID
	}
	for _, want := range []string{"Site of the parent", "Site of child 1", "Site of child 2", "Campus 1", "Campus 2"} {
		if names[want] == nil {
			t.Errorf("the merged tree lacks %q: %s", want, tree.body)
		}
	}
	if id := names["Site of child 2"]; id["type"] != "remotelocationid" || id["childId"] != float64(2) {
		t.Errorf("child 2's folder id: %v", id)
	}
	if own := do(t, "GET", api+"/V2/locations/tree", plain, "", nil); strings.Contains(own.body, "Site of child 1") {
		t.Error("a session without getClusterChildrenData sees the children")
	}

	page := do(t, "GET", api+"/V5/devices/manageddevices?offset=0&limit=10", all, "", nil)
	var pg struct {
		ManagedDevices []struct {
			Name       string
			LocationID map[string]any `json:"locationId"`
		} `json:"managedDevices"`
		TotalCount int `json:"totalCount"`
	}
	json.Unmarshal([]byte(page.body), &pg)
	if page.status != 200 || pg.TotalCount != 3 || len(pg.ManagedDevices) != 3 {
		t.Fatalf("managed devices: %d %s", page.status, page.body)
	}
	for _, d := range pg.ManagedDevices {
		if d.Name == "ap-child-1" && (d.LocationID["type"] != "remotelocationid" || d.LocationID["childId"] != float64(1)) {
			t.Errorf("child 1's AP location: %v", d.LocationID)
		}
	}
	if users := do(t, "GET", api+"/V5/users", all, "", nil); strings.Count(users.body, `"loginId":"admin"`) != 1 {
		t.Errorf("users fanned out: %s", users.body)
	}
	if aps := do(t, "GET", api+"/v2/devices/aps", all, "", nil); aps.status != 400 || aps.errorCode() != "NOT_SUPPORTED_IN_CLUSTER" {
		t.Errorf("AP listing in a cluster session: %d %s", aps.status, aps.body)
	}

	children[2].kill()
	if r := do(t, "GET", api+"/V2/locations/tree", all, "", nil); r.status != 502 || !strings.Contains(r.body, "child 2 (Campus 2)") {
		t.Errorf("fan-out with a dead child: %d %s", r.status, r.body)
	}
}

// TestClusterChildrenAsPostgresReplicas: the two children are replicas of
// one store on PostgreSQL. A write forwarded to one is read through the
// other, and each is its own child to the parent.
func TestClusterChildrenAsPostgresReplicas(t *testing.T) {
	cfg := storetest.StoreConfig(t, storetest.Postgres) // skips without WNMS_TEST_DATABASE_URL
	dir := t.TempDir()
	var entries []map[string]any
	for n := 1; n <= 2; n++ {
		addr := freeTCPPort(t)
		startProc(t, addr, "--database-url", cfg.DatabaseURL, "--data", filepath.Join(dir, fmt.Sprintf("r%d", n)),
			"--bootstrap-key-id", "replica-key", "--bootstrap-key-value", "replica-value-0123456789", "--bootstrap-key-cluster-parent")
		entries = append(entries, map[string]any{"childId": n, "name": fmt.Sprintf("Replica %d", n), "url": "http://" + addr,
			"keyId": "replica-key", "keyValue": "replica-value-0123456789"})
	}
	file := filepath.Join(dir, "cluster.json")
	os.WriteFile(file, jsonBody(map[string]any{"children": entries}), 0o600)
	parent := startProc(t, "127.0.0.1:0", "--data", filepath.Join(dir, "parent"), "--cluster-config", file, "--server-id", "100",
		"--bootstrap-key-id", "pk", "--bootstrap-key-value", "parent-value-0123456789")
	admin := session(t, parent.api, "pk", "parent-value-0123456789")
	api := "http://" + parent.api + "/new/webservice"
	if r := do(t, "PUT", api+"/V2/locations?nodeid=1", admin, "application/json", jsonBody(map[string]any{
		"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location":       map[string]any{"type": "folderlocation", "name": "Shared Site"}})); r.status != 200 {
		t.Fatalf("write through replica 1: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", api+"/V2/locations/tree?nodeid=2", admin, "", nil); r.status != 200 || !strings.Contains(r.body, "Shared Site") {
		t.Fatalf("read through replica 2: %d %s", r.status, r.body)
	}
}
