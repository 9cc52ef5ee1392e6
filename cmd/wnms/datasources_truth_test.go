package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
	"github.com/wnms/wnms/internal/wnms"
)

// truthServer is a server with its data source listeners on, one AP
// registered as the README's "Connect your network" says (its radio and
// address), and one source (the loopback) that signs RADIUS and sends
// syslog, with FreeRADIUS upstream.
type truthServer struct {
	*sourcesServer
	fr        *radiustest.FreeRADIUS
	nasSecret string
}

func startTruthServer(t *testing.T, args ...string) *truthServer {
	t.Helper()
	radiustest.NeedTool(t, "radclient", "logger")
	fr := radiustest.Start(t)
	srv := startSourcesServer(t, "127.0.0.1", args...)
	srv.addAP("aa:bb:cc:dd:ee:00", "lab-ap-1", "127.0.0.1", "aa:bb:cc:dd:ee:ff", "corp")
	const nasSecret = "nas-secret-truth"
	srv.must("data sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{
			"upstreams":           []any{map[string]any{"address": fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
			"accountingUpstreams": []any{map[string]any{"address": fr.Acct, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
		},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": nasSecret, "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
	})
	return &truthServer{sourcesServer: srv, fr: fr, nasSecret: nasSecret}
}

// auth sends a PAP Access-Request of user for the client mac at the AP
// (its BSSID and name) and returns radclient's output.
func (s *truthServer) auth(mac, user, pw string, extra ...string) string {
	s.t.Helper()
	out, ok := radiustest.Radclient(s.t, s.l.RadiusAuth, "auth", s.nasSecret, append([]string{"User-Name = " + user,
		"User-Password = " + pw, "Calling-Station-Id = " + mac, "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp",
		"NAS-Identifier = lab-ap-1", "NAS-IP-Address = 127.0.0.1", "Message-Authenticator = 0x00"}, extra...)...)
	if !ok {
		s.t.Fatalf("no answer through wnms:\n%s", out)
	}
	return out
}

// acct sends an Accounting-Request and waits for its answer.
func (s *truthServer) acct(attrs ...string) {
	s.t.Helper()
	if out, ok := radiustest.Radclient(s.t, s.l.RadiusAcct, "acct", s.nasSecret, attrs...); !ok ||
		!strings.Contains(out, "Accounting-Response") {
		s.t.Fatalf("accounting %v:\n%s", attrs, out)
	}
}

// log sends one line with logger over TCP and waits (10 s at most) until
// the assembler has read it. Each logger run is a connection of its own,
// and the server reads connections concurrently: without the wait, a
// test's lines could be read in another order than sent, which an AP's
// one forwarding connection never does.
func (s *truthServer) log(tag, text string) {
	s.t.Helper()
	before := s.linesRead()
	host, port, _ := net.SplitHostPort(s.l.Syslog)
	args := []string{"-T", "--rfc5424", "--octet-count", "-n", host, "-P", port, "-t", tag, "--", text}
	if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
		s.t.Fatalf("logger %v: %v\n%s", args, err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); s.linesRead() == before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the line %q is not read after 10 s", text)
		}
	}
}

// linesRead is how many syslog lines the assembler has read
// (wnms_syslog_lines_total, all series).
func (s *truthServer) linesRead() float64 {
	s.t.Helper()
	var n float64
	for _, line := range strings.Split(do(s.t, "GET", "http://"+s.l.Metrics+"/metrics", nil, "", nil).body, "\n") {
		if rest, ok := strings.CutPrefix(line, "wnms_syslog_lines_total{"); ok {
			if _, v, ok := strings.Cut(rest, "} "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					s.t.Fatalf("/metrics: %q", line)
				}
				n += f
			}
		}
	}
	return n
}

// ap is the lab AP's record.
func (s *truthServer) ap() (active bool, lastSeen int64) {
	s.t.Helper()
	var aps []struct {
		ActiveStatus bool  `json:"activeStatus"`
		LastSeen     int64 `json:"lastSeen"`
	}
	json.Unmarshal([]byte(s.must("AP", "GET", "/v2/devices/aps?macaddress=aa:bb:cc:dd:ee:00", nil).body), &aps)
	if len(aps) != 1 {
		s.t.Fatalf("%d APs", len(aps))
	}
	return aps[0].ActiveStatus, aps[0].LastSeen
}

// waitAP waits (20 s at most) for the lab AP to be up or down.
func (s *truthServer) waitAP(up bool, why string) {
	s.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if active, _ := s.ap(); active == up {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: the AP is not %s after 20 s\nserver log:\n%s", why, map[bool]string{true: "up", false: "down"}[up],
				radiustest.Tail(s.stderr.String(), 30))
		}
	}
}

// Traffic a source attributes to an AP is the AP's heartbeat: an AP
// registered with its radio and address, silent past the AP timeout
// (1 s here), comes back up with a RADIUS authentication (held for its
// syslog Success), an accounting packet, and a syslog line, each alone.
func TestDataSourcesTrafficIsHeartbeat(t *testing.T) {
	t.Parallel()
	s := startTruthServer(t, "--ap-timeout", "1s")
	for _, step := range []struct {
		name string
		send func()
	}{
		{"an Access-Request accepted", func() {
			if out := s.auth("02-00-00-00-01-01", "alice", "alice-pw"); !strings.Contains(out, "Access-Accept") {
				t.Fatalf("alice:\n%s", out)
			}
		}},
		{"an Access-Request rejected", func() {
			if out := s.auth("02-00-00-00-01-02", "alice", "wrong"); !strings.Contains(out, "Access-Reject") {
				t.Fatalf("wrong password:\n%s", out)
			}
		}},
		{"an accounting Start", func() {
			s.acct("Acct-Status-Type = Start", "Acct-Session-Id = hb-1", "User-Name = alice",
				"Calling-Station-Id = 02-00-00-00-01-01", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-IP-Address = 127.0.0.1")
		}},
		{"a hostapd line", func() { s.log("hostapd", "wlan0: STA 02:00:00:00:01:03 IEEE 802.11: associated") }},
	} {
		s.waitAP(false, step.name+": silent")
		_, before := s.ap()
		step.send()
		s.waitAP(true, step.name)
		if _, after := s.ap(); after <= before {
			t.Errorf("%s: lastSeen %d, before %d", step.name, after, before)
		}
	}
}

// client is a client's record, from the client list.
func (s *truthServer) client(mac string) map[string]any {
	s.t.Helper()
	var page struct {
		ClientList []map[string]any `json:"clientList"`
	}
	json.Unmarshal([]byte(s.must("clients", "GET", "/V5/devices/clients/0/100", nil).body), &page)
	for _, c := range page.ClientList {
		if c["macAddress"] == mac {
			return c
		}
	}
	return nil
}

// What a connection's records say is what was observed, and nothing
// else: a connection seen by RADIUS and syslog keeps the accepted
// request's User-Name, and takes the DHCP ACK's address and host name
// (the client's record too); a RADIUS-only Success has the address the
// RADIUS server gave (its client's record too) and no association, DHCP
// or network time (null, not 0); an accounting Stop's
// Acct-Terminate-Cause is a terminate cause, not an 802.11 reason code.
func TestDataSourcesConnectionTruth(t *testing.T) {
	t.Parallel()
	s := startTruthServer(t)

	// carol connects; the AP logs her association, keys and DHCP.
	const mac = "02:00:00:00:02:01"
	if out := s.auth("02-00-00-00-02-01", "carol", "carol-pw"); !strings.Contains(out, "Access-Accept") {
		t.Fatalf("carol:\n%s", out)
	}
	s.log("hostapd", "wlan0: STA "+mac+" IEEE 802.11: associated")
	s.log("hostapd", "wlan0: STA "+mac+" WPA: pairwise key handshake completed (RSN)")
	s.log("dnsmasq-dhcp", "DHCPACK(br-lan) 10.0.0.61 "+mac+" carols-laptop")
	ok := s.find(mac, eventType("Success"))
	if ok["username"] != "carol" || ok["ip"] != "10.0.0.61" || ok["hostName"] != "carols-laptop" || ok["dhcpLatency"] == nil ||
		ok["aaaLatency"] == nil || ok["associationTimestamp"] == nil || ok["networkTimestamp"] == nil {
		t.Errorf("Success seen by RADIUS and syslog: %v", ok)
	}
	if c := s.client(mac); c == nil || c["username"] != "carol" || c["name"] != "carols-laptop" || c["ipAddress"] != "10.0.0.61" {
		t.Errorf("carol's client: %v", c)
	}

	// The same source without syslog: the RADIUS Success is stored alone,
	// with what RADIUS saw only.
	s.must("data sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{
			"upstreams":           []any{map[string]any{"address": s.fr.Auth, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
			"accountingUpstreams": []any{map[string]any{"address": s.fr.Acct, "secret": radiustest.UpstreamSecret, "timeoutMs": 2000}},
		},
		"sources": []any{map[string]any{"name": "lab", "cidr": "127.0.0.1/32", "radiusSecret": s.nasSecret, "syslog": false,
			"locationId": map[string]any{"type": "locallocationid", "id": s.floor}}},
	})
	const alone = "02:00:00:00:02:02"
	if out := s.auth("02-00-00-00-02-02", "carol", "carol-pw"); !strings.Contains(out, "Access-Accept") {
		t.Fatalf("carol again:\n%s", out)
	}
	ok = s.find(alone, eventType("Success"))
	for _, f := range []string{"dhcpLatency", "associationTimestamp", "networkTimestamp", "hostName", "dnsLatency"} {
		if v, present := ok[f]; !present || v != nil {
			t.Errorf("RADIUS-only Success: %s = %v (present %v), want null", f, v, present)
		}
	}
	if ok["username"] != "carol" || ok["ip"] != "10.0.0.77" || ok["aaaLatency"] == nil || ok["authenticationTimestamp"] == nil {
		t.Errorf("RADIUS-only Success: %v", ok)
	}
	if c := s.client(alone); c == nil || c["username"] != "carol" || c["ipAddress"] != "10.0.0.77" {
		t.Errorf("carol's second client: %v", c)
	}

	// Accounting Stop with a terminate cause.
	s.acct("Acct-Status-Type = Stop", "Acct-Session-Id = truth-1", "User-Name = carol", "Calling-Station-Id = 02-00-00-00-02-02",
		"Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-IP-Address = 127.0.0.1", "Acct-Terminate-Cause = User-Request",
		"Acct-Session-Time = 60")
	stop := s.find(alone, func(e map[string]any) bool { return e["eventType"] == "Intermediate" })
	if stop["categoryCode"] != float64(1) || stop["typeCode"] != float64(4) || stop["subTypeCode"] != float64(1) ||
		stop["eventDescription"] != "Session ended (RADIUS accounting)" || stop["subEventDescription"] != "User Request" {
		t.Errorf("accounting Stop: %v", stop)
	}
}

// streamKinds reads the event stream from its start, of the given kinds,
// in the background: each event's kind and data.
func (s *truthServer) streamKinds(kinds string) <-chan map[string]any {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/V5/events/stream?lastEventId=0&kinds="+kinds, nil)
	req.AddCookie(s.ck)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("event stream: %v %v", err, resp)
	}
	out := make(chan map[string]any, 100)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev map[string]any
				if json.Unmarshal([]byte(data), &ev) == nil {
					out <- ev
				}
			}
		}
	}()
	return out
}

// An upstream that stops answering raises upstreamDown, and upstreamUp
// when it answers again (the event stream here; webhooks and the SNMP
// trap come from the same place); GET /V5/datasources/status tells the
// upstream's state and exchanges, and the source's state, last packet,
// records by outcome and the BSSID, NAS-Identifier and address of a NAS
// no AP matches.
func TestDataSourcesStatusAndUpstreamEvents(t *testing.T) {
	t.Parallel()
	s := startTruthServer(t)
	events := s.streamKinds("upstreamDown,upstreamUp")
	status := func() wnms.DataSourceStatus {
		t.Helper()
		var st wnms.DataSourceStatus
		json.Unmarshal([]byte(s.must("status", "GET", "/V5/datasources/status", nil).body), &st)
		return st
	}
	st := status()
	if len(st.Sources) != 1 || st.Sources[0].State != "idle" || st.Sources[0].LastPacket != nil ||
		len(st.Upstreams) != 2 || st.Upstreams[0].State != "idle" || st.Upstreams[0].Address != s.fr.Auth {
		t.Fatalf("before any packet: %+v", st)
	}

	if out := s.auth("02-00-00-00-03-01", "carol", "carol-pw"); !strings.Contains(out, "Access-Accept") {
		t.Fatalf("carol:\n%s", out)
	}
	// A NAS wnms knows no AP of.
	if out, ok := radiustest.Radclient(t, s.l.RadiusAuth, "auth", s.nasSecret, "User-Name = bob", "User-Password = wrong",
		"Calling-Station-Id = 02-00-00-00-03-02", "Called-Station-Id = 02-99-00-00-00-01:corp", "NAS-Identifier = unknown-ap",
		"NAS-IP-Address = 127.0.0.9", "Message-Authenticator = 0x00"); !ok || !strings.Contains(out, "Access-Reject") {
		t.Fatalf("bob at an unknown AP:\n%s", out)
	}
	s.find("02:00:00:00:03:02", eventType("Failure"))

	// FreeRADIUS stops: a request times out (2 s) and the upstream is
	// down; it starts again on the same port, and the next request it
	// answers brings the upstream up.
	s.fr.Stop()
	if out, ok := radiustest.Radclient(t, s.l.RadiusAuth, "auth", s.nasSecret, "User-Name = carol", "User-Password = carol-pw",
		"Calling-Station-Id = 02-00-00-00-03-03", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-Identifier = lab-ap-1",
		"Message-Authenticator = 0x00"); ok {
		t.Fatalf("answered with FreeRADIUS stopped:\n%s", out)
	}
	next := func(kind string) map[string]any {
		t.Helper()
		select {
		case ev := <-events:
			data, _ := ev["data"].(map[string]any)
			if ev["kind"] != kind || data["address"] != s.fr.Auth || data["kind"] != "auth" {
				t.Fatalf("event %v, want %s of %s", ev, kind, s.fr.Auth)
			}
			return ev
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s event in 20 s\nserver log:\n%s", kind, radiustest.Tail(s.stderr.String(), 20))
		}
		return nil
	}
	next("upstreamDown")
	if st := status(); st.Upstreams[0].State != "down" || st.Upstreams[0].Counts["failed"] < 1 {
		t.Errorf("upstream after the timeout: %+v", st.Upstreams[0])
	}
	again := exec.Command("freeradius", "-f", "-d", s.fr.Dir, "-X")
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Process.Kill(); again.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, _ := radiustest.Radclient(t, s.l.RadiusAuth, "auth", s.nasSecret, "User-Name = carol", "User-Password = carol-pw",
			"Calling-Station-Id = 02-00-00-00-03-04", "Called-Station-Id = AA-BB-CC-DD-EE-FF:corp", "NAS-Identifier = lab-ap-1",
			"Message-Authenticator = 0x00")
		if strings.Contains(out, "Access-Accept") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("FreeRADIUS did not come back in 30 s:\n%s", out)
		}
	}
	next("upstreamUp")

	st = status()
	up := st.Upstreams[0]
	if up.State != "up" || up.LastAnswer == nil || up.Counts["answered"] < 3 || up.Counts["failed"] < 1 ||
		st.Upstreams[1].Kind != "accounting" || st.Upstreams[1].State != "idle" {
		t.Errorf("upstreams: %+v", st.Upstreams)
	}
	src := st.Sources[0]
	if src.State != "up" || src.LastPacket == nil || src.Counts["accepted"] < 1 || src.Counts["unmatched"] != 1 {
		t.Errorf("source: %+v", src)
	}
	seen := map[wnms.UnmatchedID]bool{}
	for _, u := range src.Unmatched {
		if u.Records != 1 || u.LastSeen == 0 {
			t.Errorf("unmatched %+v", u)
		}
		u.LastSeen, u.Records = 0, 0
		seen[u] = true
	}
	if len(src.Unmatched) != 3 || !seen[wnms.UnmatchedID{BSSID: "02:99:00:00:00:01"}] || !seen[wnms.UnmatchedID{NASIdentifier: "unknown-ap"}] ||
		!seen[wnms.UnmatchedID{Address: "127.0.0.9"}] {
		t.Errorf("unmatched: %+v", src.Unmatched)
	}
}
