package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/wnms"
)

// TestDataSourcesEndToEnd runs the server with its RADIUS and syslog
// listeners between real programs: NAS requests from radclient go
// through wnms to FreeRADIUS and back, accounting is answered after
// commit and passed on, and hostapd and dnsmasq lines sent by logger
// become a Success. Each lands as client events through the one write
// path, placed at the AP registered for the BSSID, and /metrics counts
// them by source.
func TestDataSourcesEndToEnd(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "radclient", "logger")
	fr := radiustest.Start(t)
	srv := startSourcesServer(t, "127.0.0.1")
	l, base, ck, stderr := srv.l, srv.base, srv.ck, srv.stderr
	must := func(what string, r answer, want int) answer {
		t.Helper()
		if r.status != want {
			t.Fatalf("%s: %d %s", what, r.status, r.body)
		}
		return r
	}
	// The AP: its radio's BSSID is what the NAS names in Called-Station-Id;
	// the syslog lines name none, so they are placed by the AP's address.
	srv.addAP("aa:bb:cc:dd:ee:00", "lab-ap-1", "127.0.0.1", "aa:bb:cc:dd:ee:ff", "corp")
	const nasSecret = "nas-secret-e2e"
	must("data sources", do(t, "PUT", base+"/V5/datasources", ck, "application/json", jsonBody(map[string]any{
		"radius": map[string]any{
			"upstreams":           []any{map[string]any{"address": fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
			"accountingUpstreams": []any{map[string]any{"address": fr.Acct, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
		},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret, "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
	})), 200)

	// PAP through the proxy: a wrong password is rejected; a NAS with the
	// wrong secret gets nothing. Each request is signed: radclient computes
	// the Message-Authenticator of a request that names one with value 0x00.
	nas := func(mac, user, pw string) []string {
		return []string{"User-Name = " + user, "User-Password = " + pw, "Calling-Station-Id = " + mac,
			"Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-Identifier = lab-ap-1", "NAS-IP-Address = 127.0.0.1",
			"Message-Authenticator = 0x00"}
	}
	if out, ok := radiustest.Radclient(t, l.RadiusAuth, "auth", nasSecret, nas("02-00-00-00-00-02", "alice", "wrong")...); !ok ||
		!strings.Contains(out, "Access-Reject") {
		t.Fatalf("wrong password through wnms:\n%s", out)
	}
	// A NAS wnms knows no AP of (unknown BSSID, name and address): its
	// client's Failure is placed at the source's location, with no radio
	// (channel null).
	if out, ok := radiustest.Radclient(t, l.RadiusAuth, "auth", nasSecret, "User-Name = bob", "User-Password = wrong",
		"Calling-Station-Id = 02-00-00-00-00-04", "Called-Station-Id = 02-99-00-00-00-01:corp", "NAS-Identifier = unknown-ap",
		"NAS-IP-Address = 127.0.0.9", "Message-Authenticator = 0x00"); !ok || !strings.Contains(out, "Access-Reject") {
		t.Fatalf("wrong password from an unknown AP through wnms:\n%s", out)
	}
	// (An Access-Request's authenticator is random: only its
	// Message-Authenticator shows a wrong secret, RFC 3579.)
	if out, ok := radiustest.Radclient(t, l.RadiusAuth, "auth", "not-the-secret", nas("02-00-00-00-00-03", "alice", "alice-pw")...); ok {
		t.Fatalf("a bad authenticator was answered:\n%s", out)
	}
	// Accounting: answered only after commit, and passed on to FreeRADIUS.
	acct := func(status string, extra ...string) {
		t.Helper()
		attrs := append([]string{"Acct-Status-Type = " + status, "Acct-Session-Id = e2e-1", "User-Name = alice",
			"Calling-Station-Id = 02-00-00-00-00-01", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-IP-Address = 127.0.0.1",
			"Framed-IP-Address = 10.0.0.51"}, extra...)
		if out, ok := radiustest.Radclient(t, l.RadiusAcct, "acct", nasSecret, attrs...); !ok || !strings.Contains(out, "Accounting-Response") {
			t.Fatalf("accounting %s:\n%s", status, out)
		}
	}
	acct("Start")
	acct("Interim-Update", "Acct-Input-Octets = 1000", "Acct-Output-Octets = 5000", "Acct-Session-Time = 60")
	acct("Stop", "Acct-Input-Octets = 3000", "Acct-Output-Octets = 9000", "Acct-Session-Time = 120", "Acct-Terminate-Cause = User-Request")

	// Syslog: the AP's hostapd and dnsmasq lines of the first client's
	// connection, over TCP in order, as a syslog daemon forwards them on
	// its one connection. Each logger run is a connection of its own,
	// which the server reads concurrently with the next: each line is
	// waited for (the assembler has read it) before the next is sent.
	host, port, _ := net.SplitHostPort(l.Syslog)
	linesRead := func() int {
		m := must("metrics", do(t, "GET", "http://"+l.Metrics+"/metrics", nil, "", nil), 200).body
		n := 0
		for _, row := range strings.Split(m, "\n") {
			if strings.HasPrefix(row, "wnms_syslog_lines_total{") && strings.Contains(row, "parsed\"}") && !strings.Contains(row, "_unparsed") {
				v, _ := strconv.ParseFloat(row[strings.LastIndexByte(row, ' ')+1:], 64)
				n += int(v)
			}
		}
		return n
	}
	// The first client authenticates (the right password is accepted by
	// FreeRADIUS) just before the AP logs its association: an accept more
	// than 5 s before the association line is another attempt's.
	if out, ok := radiustest.Radclient(t, l.RadiusAuth, "auth", nasSecret, nas("02-00-00-00-00-01", "alice", "alice-pw")...); !ok ||
		!strings.Contains(out, "Access-Accept") {
		t.Fatalf("right password through wnms:\n%s", out)
	}
	for i, line := range []struct{ tag, text string }{
		{"hostapd", "wlan0: STA 02:00:00:00:00:01 IEEE 802.11: associated"},
		{"hostapd", "wlan0: STA 02:00:00:00:00:01 WPA: pairwise key handshake completed (RSN)"},
		{"hostapd", "wlan0: AP-STA-CONNECTED 02:00:00:00:00:01"},
		{"dnsmasq-dhcp", "DHCPDISCOVER(br-lan) 02:00:00:00:00:01"},
		{"dnsmasq-dhcp", "DHCPACK(br-lan) 10.0.0.60 02:00:00:00:00:01 phone"},
		{"hostapd", "wlan0: AP-STA-DISCONNECTED 02:00:00:00:00:01"},
	} {
		args := []string{"-T", "--rfc5424", "--octet-count", "-n", host, "-P", port, "-t", line.tag, "--", line.text}
		if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		for deadline := time.Now().Add(10 * time.Second); linesRead() <= i; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("line %d (%s) not read in 10 s", i, line.text)
			}
		}
	}

	events, find, is := srv.events, srv.find, eventType
	// One connection seen by RADIUS and syslog is one Success with both
	// latencies.
	ok := find("02:00:00:00:00:01", is("Success"))
	if ok["aaaLatency"] == nil || ok["dhcpLatency"] == nil || ok["bssid"] != "AA:BB:CC:DD:EE:FF" || ok["channel"] != float64(36) ||
		ok["associatedAPName"] != "lab-ap-1" || ok["ssid"] != "corp" || ok["locationId"].(map[string]any)["id"] != float64(srv.floor) {
		t.Errorf("Success: %v", ok)
	}
	successes := 0
	for _, e := range events("02:00:00:00:00:01") {
		if e["eventType"] == "Success" {
			successes++
		}
	}
	if successes != 1 {
		t.Errorf("%d Successes for one connection", successes)
	}
	rej := find("02:00:00:00:00:02", is("Failure"))
	if rej["failureCode"] != float64(2) || rej["subFailureCode"] != float64(202) {
		t.Errorf("RADIUS Reject: %v", rej)
	}
	unknown := find("02:00:00:00:00:04", is("Failure"))
	if unknown["subFailureCode"] != float64(202) || unknown["channel"] != nil || unknown["bssid"] != "02:99:00:00:00:01" ||
		unknown["associatedAPName"] != "" || unknown["protocol"] != "UNKNOWN" || unknown["locationId"].(map[string]any)["id"] != float64(srv.floor) {
		t.Errorf("Failure at an unknown AP: %v", unknown)
	}
	find("02:00:00:00:00:01", func(e map[string]any) bool { return e["eventType"] == "Intermediate" && e["subTypeCode"] != nil })
	if n := len(events("02:00:00:00:00:03")); n != 0 {
		t.Errorf("the NAS with the wrong secret made %d events", n)
	}
	// Accounting's byte counts are the client's traffic; it has no radio
	// metrics, so no data rate.
	trend := func(typ string) []any {
		r := must(typ, do(t, "GET", base+"/V5/devices/clients/statistics/trend?type="+typ+"&macaddress=02:00:00:00:00:01", ck, "", nil), 200)
		var tr struct {
			Samples []any `json:"samples"`
		}
		json.Unmarshal([]byte(r.body), &tr)
		return tr.Samples
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(trend("clienttraffic")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no traffic from accounting\nserver log:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rate := trend("clientdatarate"); len(rate) != 0 {
		t.Errorf("a data rate from accounting: %v", rate)
	}
	// FreeRADIUS got the accounting packets wnms passed on.
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(fr.Output(), "Acct-Session-Id = \"e2e-1\"") {
		if time.Now().After(deadline) {
			t.Fatalf("accounting not passed on to FreeRADIUS:\n%s", radiustest.Tail(fr.Output(), 40))
		}
		time.Sleep(50 * time.Millisecond)
	}

	m := must("metrics", do(t, "GET", "http://"+l.Metrics+"/metrics", nil, "", nil), 200).body
	for _, series := range []string{
		`wnms_datasource_records_total{source="radius",kind="clientevents",outcome="accepted"} `,
		`wnms_datasource_records_total{source="syslog",kind="clientevents",outcome="accepted"} `,
		`wnms_datasource_records_total{source="radius",kind="clientstats",outcome="accepted"} `,
	} {
		if i := strings.Index(m, series); i < 0 || strings.HasPrefix(m[i+len(series):], "0\n") {
			t.Errorf("/metrics: %s is missing or 0", series)
		}
	}
	for _, want := range []string{
		`wnms_radius_dropped_total{reason="bad_message_authenticator"} 1`,
		`wnms_radius_packets_total{packet="accounting_response"} 3`,
		`wnms_datasource_unmatched_total{source="radius",kind="clientevents"} 1`,
		`wnms_syslog_messages_total{outcome="parsed"} 6`,
		`wnms_syslog_connections_total{outcome="accepted"} 6`,
		`wnms_syslog_connections_total{outcome="refused_per_address"} 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, secret := range []string{nasSecret, radiustest.UpstreamSecret} {
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("the server log shows a secret")
		}
	}
}

// sourcesServer is a server with its data source listeners on, signed in
// as its bootstrap administrator, with one floor ("Lab floor").
type sourcesServer struct {
	t      *testing.T
	l      listening
	stderr *syncBuf
	data   string
	base   string
	ck     *http.Cookie
	floor  int64
}

// startSourcesServer boots a server whose RADIUS and syslog listeners
// listen on host (free ports), with args added.
func startSourcesServer(t *testing.T, host string, args ...string) *sourcesServer {
	t.Helper()
	s, _ := startSourcesServerIn(t, t.TempDir(), 0, host, args...)
	return s
}

// startSourcesServerIn is startSourcesServer on the data directory data,
// whose floor is floor (0: made now); it returns the server's stop too.
func startSourcesServerIn(t *testing.T, data string, floor int64, host string, args ...string) (*sourcesServer, func() error) {
	t.Helper()
	l, _, stderr, stop := bootServe(t, nil, append([]string{"--data", data, "--radius-auth-listen", host + ":0",
		"--radius-acct-listen", host + ":0", "--syslog-listen", host + ":0"}, args...)...)
	if l.RadiusAuth == "" || l.RadiusAcct == "" || l.Syslog == "" {
		t.Fatalf("listeners: %+v", l)
	}
	key := struct{ KeyID, KeyValue string }{}
	b, err := os.ReadFile(filepath.Join(data, "bootstrap-key.json"))
	if err != nil || json.Unmarshal(b, &key) != nil {
		t.Fatalf("bootstrap key: %v %s", err, b)
	}
	s := &sourcesServer{t: t, l: l, stderr: stderr, data: data, base: "http://" + l.API + "/new/webservice",
		ck: login(t, "http://"+l.API, key.KeyID, key.KeyValue)}
	s.floor = floor
	if s.floor == 0 {
		var made struct {
			ID struct{ ID int64 } `json:"id"`
		}
		json.Unmarshal([]byte(s.must("floor", "PUT", "/V2/locations", map[string]any{
			"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
			"location":       map[string]any{"type": "floorlocation", "name": "Lab floor", "timezoneId": "UTC"}}).body), &made)
		s.floor = made.ID.ID
	}
	return s, stop
}

// must makes a call (path below /new/webservice) that must answer 200.
func (s *sourcesServer) must(what, method, path string, body any) answer {
	s.t.Helper()
	var b []byte
	if body != nil {
		b = jsonBody(body)
	}
	r := do(s.t, method, s.base+path, s.ck, "application/json", b)
	if r.status != 200 {
		s.t.Fatalf("%s: %d %s", what, r.status, r.body)
	}
	return r
}

// addAP registers an AP at the floor with one radio.
func (s *sourcesServer) addAP(mac, name, ip, bssid, ssid string) {
	s.t.Helper()
	s.must("AP", "POST", "/V5/ingest/aps", []any{map[string]any{
		"macaddress": mac, "name": name, "ipAddress": ip,
		"locationId": map[string]any{"type": "locallocationid", "id": s.floor},
		"radios":     []any{map[string]any{"macaddress": bssid, "channel": 36, "ssid": ssid}}}})
}

// events are a client's events, newest first.
func (s *sourcesServer) events(mac string) []map[string]any {
	s.t.Helper()
	r := s.must("events of "+mac, "GET", "/V5/devices/clientevents/"+mac+"/0/50", nil)
	var page struct {
		ClientEvents []map[string]any `json:"clientEvents"`
	}
	if err := json.Unmarshal([]byte(r.body), &page); err != nil {
		s.t.Fatalf("events of %s: %v %s", mac, err, r.body)
	}
	return page.ClientEvents
}

// find waits (30 s at most) for an event of the client that matches.
func (s *sourcesServer) find(mac string, match func(map[string]any) bool) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, e := range s.events(mac) {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no such event of %s in %v\nserver log:\n%s", mac, s.events(mac), radiustest.Tail(s.stderr.String(), 30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func eventType(typ string) func(map[string]any) bool {
	return func(e map[string]any) bool { return e["eventType"] == typ }
}

func failure(code int) func(map[string]any) bool {
	return func(e map[string]any) bool {
		return e["eventType"] == "Failure" && e["subFailureCode"] == float64(code)
	}
}

// The README's rsyslog line, run by rsyslogd as written (the address and
// port the test's): an AP's hostapd and dnsmasq lines, logged to the
// local rsyslogd, reach wnms over its forwarding connection and make the
// connection's Success.
func TestREADMERsyslog(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "rsyslogd", "logger")
	srv := startSourcesServer(t, "127.0.0.1")
	srv.addAP("aa:bb:cc:dd:ee:00", "lab-ap-1", "127.0.0.1", "aa:bb:cc:dd:ee:ff", "corp")
	srv.must("data sources", "PUT", "/V5/datasources", map[string]any{"radius": map[string]any{"upstreams": []any{}},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}}})

	// rsyslogd takes the AP's lines on a UDP port of its own, as the
	// local syslog daemon of an AP or DHCP server would, and forwards them
	// with the README's line.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in := pc.LocalAddr().String()
	pc.Close()
	_, inPort, _ := net.SplitHostPort(in)
	block := strings.ReplaceAll(readmeBlock(t, "<!-- lab: rsyslog.conf -->"), "10.0.0.5:514", srv.l.Syslog)
	dir := t.TempDir()
	conf := filepath.Join(dir, "rsyslog.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("global(workDirectory=%q)\nmodule(load=\"imudp\")\ninput(type=\"imudp\" address=\"127.0.0.1\" port=%q)\n%s",
		dir, inPort, block)), 0o600)
	rs := exec.Command("rsyslogd", "-n", "-f", conf, "-i", filepath.Join(dir, "rsyslogd.pid"))
	var rsOut syncBuf
	rs.Stdout, rs.Stderr = &rsOut, &rsOut
	if err := rs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Process.Kill(); rs.Wait() })

	host, port, _ := net.SplitHostPort(in)
	send := func(tag, text string) {
		t.Helper()
		args := []string{"-d", "--rfc3164", "-n", host, "-P", port, "-t", tag, "--", text}
		if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
	}
	messages := func() float64 {
		m := do(t, "GET", "http://"+srv.l.Metrics+"/metrics", nil, "", nil).body
		for _, row := range strings.Split(m, "\n") {
			if strings.HasPrefix(row, `wnms_syslog_messages_total{outcome="parsed"} `) {
				v, _ := strconv.ParseFloat(row[strings.LastIndexByte(row, ' ')+1:], 64)
				return v
			}
		}
		return 0
	}
	// Until rsyslogd listens, what is sent to it is lost: probe until a
	// line comes through.
	for deadline := time.Now().Add(30 * time.Second); messages() == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing came through rsyslogd in 30 s:\n%s", rsOut.String())
		}
		send("probe", "wnms forwarding test")
	}
	for _, line := range []struct{ tag, text string }{
		{"hostapd", "wlan0: STA 02:00:00:00:00:05 IEEE 802.11: associated"},
		{"hostapd", "wlan0: STA 02:00:00:00:00:05 WPA: pairwise key handshake completed (RSN)"},
		{"hostapd", "wlan0: AP-STA-CONNECTED 02:00:00:00:00:05"},
		{"dnsmasq-dhcp", "DHCPDISCOVER(br-lan) 02:00:00:00:00:05"},
		{"dnsmasq-dhcp", "DHCPACK(br-lan) 10.0.0.65 02:00:00:00:00:05 laptop"},
	} {
		send(line.tag, line.text)
	}
	ok := srv.find("02:00:00:00:00:05", eventType("Success"))
	if ok["dhcpLatency"] == nil || ok["associatedAPName"] != "lab-ap-1" || ok["ssid"] != "corp" {
		t.Errorf("Success through rsyslog: %v", ok)
	}
}

// TestDataSourcesReconnectionEachTheirAccept: a client connects twice
// within a second through wnms's RADIUS proxy, logging to its syslog.
// The first connection's syslog Success (made when the second association
// ends it) reaches the bridge after the second accept was held: each
// Success still takes its own accept, so the two connections make two
// Successes, and no accept is let go to be stored as a Success of its
// own (matched by arrival alone, the first Success would take the second
// accept, and the first accept would be stored alone: three Successes).
func TestDataSourcesReconnectionEachTheirAccept(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "radclient", "logger")
	fr := radiustest.Start(t)
	srv := startSourcesServer(t, "127.0.0.1")
	srv.addAP("aa:bb:cc:dd:ee:00", "lab-ap-1", "127.0.0.1", "aa:bb:cc:dd:ee:ff", "corp")
	const nasSecret = "nas-secret-reconnect"
	srv.must("data sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{
			"upstreams": []any{map[string]any{"address": fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
		},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret, "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
	})
	const mac = "02:00:00:00:00:07"
	accept := func() {
		t.Helper()
		if out, ok := radiustest.Radclient(t, srv.l.RadiusAuth, "auth", nasSecret, "User-Name = alice", "User-Password = alice-pw",
			"Calling-Station-Id = 02-00-00-00-00-07", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-Identifier = lab-ap-1",
			"NAS-IP-Address = 127.0.0.1", "Message-Authenticator = 0x00"); !ok || !strings.Contains(out, "Access-Accept") {
			t.Fatalf("through wnms:\n%s", out)
		}
	}
	host, port, _ := net.SplitHostPort(srv.l.Syslog)
	logged := 0
	log := func(tag, text string) {
		t.Helper()
		args := []string{"-T", "--rfc5424", "--octet-count", "-n", host, "-P", port, "-t", tag, "--", text}
		if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		logged++
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			m := do(t, "GET", "http://"+srv.l.Metrics+"/metrics", nil, "", nil).body
			if strings.Contains(m, fmt.Sprintf(`wnms_syslog_messages_total{outcome="parsed"} %d`, logged)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("line %q not read in 10 s", text)
			}
		}
	}
	accept()
	log("hostapd", "wlan0: STA "+mac+" IEEE 802.11: associated")
	log("hostapd", "wlan0: STA "+mac+" WPA: pairwise key handshake completed (RSN)")
	// The second connection: its accept comes well after the first's key
	// handshake (a new EAP exchange), and within the second the
	// assembler's batch holding the first Success waits to be sent. This
	// wait is the scenario's own timeline, not a wait for something to
	// happen: the bridge tells the connections' accepts apart by wnms's
	// clock (an accept more than 250 ms after a connection's handshake
	// line was received is another connection's), so the gap must pass
	// in wall-clock time.
	time.Sleep(400 * time.Millisecond)
	log("hostapd", "wlan0: STA "+mac+" IEEE 802.11: associated")
	accept()
	log("hostapd", "wlan0: STA "+mac+" WPA: pairwise key handshake completed (RSN)")
	log("dnsmasq-dhcp", "DHCPACK(br-lan) 10.0.0.61 "+mac+" phone")

	var successes []map[string]any
	for deadline := time.Now().Add(30 * time.Second); len(successes) < 2; time.Sleep(100 * time.Millisecond) {
		successes = successes[:0]
		for _, e := range srv.events(mac) {
			if e["eventType"] == "Success" {
				successes = append(successes, e)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Successes in 30 s: %v", len(successes), srv.events(mac))
		}
	}
	if len(successes) != 2 {
		t.Fatalf("%d Successes for two connections: %v", len(successes), successes)
	}
	// A merged Success has the association its syslog lines saw (and its
	// accept's eventId); an accept stored alone has none (null).
	accepts := map[string]bool{}
	for _, s := range successes {
		id, _ := s["eventId"].(string)
		if !strings.HasPrefix(id, "radius-") || s["associationTimestamp"] == nil {
			t.Errorf("a RADIUS accept stored as a Success of its own, or a Success without its accept: %v", s)
		}
		accepts[id] = true
	}
	// Both accepts were taken by a Success, each by its own, and none
	// waits any more: no accept is left to be let go and stored later as
	// a Success of its own, so the two are all there will be.
	if len(accepts) != 2 {
		t.Errorf("the two Successes took one accept: %v", successes)
	}
	if m := do(t, "GET", "http://"+srv.l.Metrics+"/metrics", nil, "", nil).body; !strings.Contains(m, "\nwnms_datasource_held_accepts 0\n") {
		t.Errorf("accepts still held:\n%s", m)
	}
}

// Two customers' syslog sources, a client MAC in both: customer 1's AP
// logs the client's association and keys from 127.0.0.1, customer 2's
// DHCP server a DHCPNAK for the same MAC from ::1, each sent by logger to
// the running server. The NAK is customer 2's client's Failure 3/302;
// customer 1's client gets none.
func TestDataSourcesSyslogCustomersApart(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "logger")
	// The listeners on every address, so that lines come from 127.0.0.1
	// and from ::1 (Linux sends to any 127/8 address from 127.0.0.1).
	srv := startSourcesServer(t, "[::]")
	srv.addAP("aa:bb:cc:dd:ee:00", "ap-of-1", "127.0.0.1", "aa:bb:cc:dd:ee:ff", "corp")
	srv.must("customer 1's sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}},
		"sources": []any{map[string]any{"name": "APs", "cidr": "127.0.0.1/32", "radiusSecret": "", "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
	})
	// Customer 2: a SUPERUSER made by the CLI beside the running server.
	code, out, errs := runCLI([]string{"apikey", "create", "--data", srv.data, "--login", "tenant-2", "--role", "SUPERUSER", "--customer", "2"}, nil)
	var key struct{ KeyID, KeyValue string }
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil {
		t.Fatalf("apikey create: %d %s %s", code, out, errs)
	}
	ck2 := login(t, "http://"+srv.l.API, key.KeyID, key.KeyValue)
	as2 := func(what, method, path string, body any) string {
		t.Helper()
		var b []byte
		if body != nil {
			b = jsonBody(body)
		}
		r := do(t, method, srv.base+path, ck2, "application/json", b)
		if r.status != 200 {
			t.Fatalf("customer 2's %s: %d %s", what, r.status, r.body)
		}
		return r.body
	}
	var floor2 struct {
		ID struct{ ID int64 } `json:"id"`
	}
	json.Unmarshal([]byte(as2("floor", "PUT", "/V2/locations", map[string]any{
		"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
		"location":       map[string]any{"type": "floorlocation", "name": "Floor of 2", "timezoneId": "UTC"}})), &floor2)
	as2("sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{"upstreams": []any{}, "accountingUpstreams": []any{}},
		"sources": []any{map[string]any{"name": "DHCP server", "cidr": "::1", "radiusSecret": "", "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": floor2.ID.ID}}},
	})

	_, port, _ := net.SplitHostPort(srv.l.Syslog)
	const mac = "02:00:00:00:0d:01"
	for i, l := range []struct{ to, tag, text string }{
		{"127.0.0.1", "hostapd", "wlan0: STA " + mac + " IEEE 802.11: associated"},
		{"127.0.0.1", "hostapd", "wlan0: STA " + mac + " WPA: pairwise key handshake completed (RSN)"},
		{"::1", "dnsmasq-dhcp", "DHCPREQUEST(eth0) 10.0.0.9 " + mac},
		{"::1", "dnsmasq-dhcp", "DHCPNAK(eth0) 10.0.0.9 " + mac + " wrong network"},
	} {
		args := []string{"-T", "--rfc5424", "--octet-count", "-n", l.to, "-P", port, "-t", l.tag, "--", l.text}
		if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			m := do(t, "GET", "http://"+srv.l.Metrics+"/metrics", nil, "", nil).body
			if strings.Contains(m, fmt.Sprintf(`wnms_syslog_messages_total{outcome="parsed"} %d`, i+1)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("line %q not read in 10 s", l.text)
			}
		}
	}
	events2 := func() []map[string]any {
		var page struct {
			ClientEvents []map[string]any `json:"clientEvents"`
		}
		json.Unmarshal([]byte(as2("events", "GET", "/V5/devices/clientevents/"+mac+"/0/50", nil)), &page)
		return page.ClientEvents
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if slices.ContainsFunc(events2(), failure(302)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("customer 2's client has no DHCPNAK Failure: %v\nserver log:\n%s", events2(), radiustest.Tail(srv.stderr.String(), 30))
		}
	}
	// Customer 1's events of the client are in (its association), and
	// its batch went out before customer 2's: no Failure among them.
	srv.find(mac, func(e map[string]any) bool { return e["eventType"] == "Intermediate" })
	for _, e := range srv.events(mac) {
		if e["eventType"] == "Failure" {
			t.Errorf("customer 1's client has a Failure from customer 2's DHCP server: %v", e)
		}
	}

	// One source holding idle TCP connections shuts no one else out: its
	// seventeenth is refused and counted, and customer 2's line still
	// comes in.
	metric := func(series string) bool {
		return strings.Contains(do(t, "GET", "http://"+srv.l.Metrics+"/metrics", nil, "", nil).body, "\n"+series+"\n")
	}
	for range 17 {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	for deadline := time.Now().Add(10 * time.Second); !metric(`wnms_syslog_connections_total{outcome="refused_per_address"} 1`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the seventeenth connection of one address was not refused")
		}
	}
	args := []string{"-T", "--rfc5424", "--octet-count", "-n", "::1", "-P", port, "-t", "dnsmasq-dhcp", "--", "DHCPNAK(eth0) 10.0.0.9 02:00:00:00:0d:02 wrong network"}
	if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
		t.Fatalf("logger %v: %v\n%s", args, err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); !metric(`wnms_syslog_messages_total{outcome="parsed"} 5`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("another source's line was not read beside one source's 16 idle connections")
		}
	}
	if !metric(`wnms_syslog_connections_total{outcome="accepted"} 21`) {
		t.Errorf("accepted connections: want 21 (5 from logger, 16 held)")
	}
}

// TestDataSourcesEachCustomerOnItsOwn: another customer's upstream
// whose host name stopped resolving (stored when it did) neither fails
// this customer's save nor, after a restart, its intake; and through the
// whole server, an unsigned Access-Request is dropped and counted by
// reason, and an upstream that is the server's own RADIUS listener is
// refused.
func TestDataSourcesEachCustomerOnItsOwn(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "radclient")
	fr := radiustest.Start(t)
	data := t.TempDir()
	// Customer 2, stored before the server starts: its upstream's name
	// does not resolve (.invalid never does, RFC 6761).
	st, err := store.Open(context.Background(), store.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.EnsureCustomer(ctx, 2, "customer 2"); err != nil {
		t.Fatal(err)
	}
	const gone = "no-such-host.invalid:1812"
	if _, err := st.UpdateDataSources(ctx, 2, func(*wnms.DataSources) (*wnms.DataSources, error) {
		return &wnms.DataSources{Radius: wnms.RadiusUpstreams{Upstreams: []wnms.RadiusUpstream{{Address: gone, Secret: "s2"}},
			AccountingUpstreams: []wnms.RadiusUpstream{}},
			Sources: []wnms.DataSource{{Name: "c2", CIDR: "127.0.0.5/32", RadiusSecret: "c2-secret", LocationID: wnms.LocalID(1)}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	srv, stop := startSourcesServerIn(t, data, 0, "127.0.0.1")
	const nasSecret = "nas-secret-own"
	config := func(upstream string) map[string]any {
		return map[string]any{
			"radius": map[string]any{"upstreams": []any{map[string]any{"address": upstream, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}}},
			"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret,
				"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
		}
	}
	srv.must("a save beside customer 2's upstream that does not resolve", "PUT", "/V5/datasources", config(fr.Auth))
	// The server's own RADIUS listeners are no upstream.
	for _, own := range []string{srv.l.RadiusAuth, srv.l.RadiusAcct} {
		r := do(t, "PUT", srv.base+"/V5/datasources", srv.ck, "application/json", jsonBody(config(own)))
		if r.status != 400 || !strings.Contains(r.body, "radius.upstreams[0].address") {
			t.Errorf("upstream %s, the server's own listener: %d %s", own, r.status, r.body)
		}
	}
	pap := []string{"User-Name = alice", "User-Password = alice-pw", "Calling-Station-Id = 02-00-00-00-00-21"}
	accepted := func(when string) {
		t.Helper()
		if out, ok := radiustest.Radclient(t, srv.l.RadiusAuth, "auth", nasSecret, append(pap, "Message-Authenticator = 0x00")...); !ok ||
			!strings.Contains(out, "Access-Accept") || !strings.Contains(out, "Message-Authenticator = 0x") {
			t.Fatalf("%s: want a signed Access-Accept through wnms:\n%s", when, out)
		}
	}
	accepted("after the save")
	if out, ok := radiustest.Radclient(t, srv.l.RadiusAuth, "auth", nasSecret, pap...); ok {
		t.Fatalf("an unsigned Access-Request was answered:\n%s", out)
	}
	if m := do(t, "GET", "http://"+srv.l.Metrics+"/metrics", nil, "", nil).body; !strings.Contains(m, `wnms_radius_dropped_total{reason="no_message_authenticator"} 1`) {
		t.Errorf("/metrics does not count the unsigned request:\n%s", m)
	}

	// Restarted, the server puts this customer's configuration in force
	// beside customer 2's.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	srv, _ = startSourcesServerIn(t, data, srv.floor, "127.0.0.1")
	accepted("after a restart")
	if !strings.Contains(srv.stderr.String(), "no-such-host.invalid") {
		t.Errorf("the server log does not name customer 2's upstream that does not resolve:\n%s", radiustest.Tail(srv.stderr.String(), 20))
	}
}
