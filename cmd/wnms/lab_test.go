//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/radius/radiustest"
)

// lab is a small real network in two network namespaces: an "AP" running
// hostapd (driver=wired: 802.1X on a veth port) and dnsmasq, and a
// "client" running wpa_supplicant (driver=wired) and busybox's DHCP
// client, joined by a veth pair; a second pair joins the AP to the test's
// own namespace, where wnms and FreeRADIUS run. hostapd authenticates
// through wnms's RADIUS proxy; hostapd's and dnsmasq's logs go to wnms's
// syslog through logger, as a syslog daemon would forward them.
type lab struct {
	t                  *testing.T
	apNS, clNS         string
	up0, up1, port, cl string // interface names
	wnmsIP, apIP       string
	portMAC            string
	dir                string
	procs              []*exec.Cmd
	mu                 sync.Mutex
	logs               map[string]*syncBuf
}

func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func newLab(t *testing.T) *lab {
	t.Helper()
	tag := fmt.Sprintf("%06x", rand.IntN(1<<24))
	n := rand.IntN(250) + 2
	l := &lab{t: t, apNS: "wnms-ap-" + tag, clNS: "wnms-cl-" + tag, up0: "wu" + tag + "a", up1: "wu" + tag + "b",
		port: "wp" + tag + "a", cl: "wp" + tag + "b", wnmsIP: fmt.Sprintf("10.231.%d.1", n), apIP: fmt.Sprintf("10.231.%d.2", n),
		dir: t.TempDir(), logs: map[string]*syncBuf{}}
	t.Cleanup(l.close)
	for _, c := range [][]string{
		{"ip", "netns", "add", l.apNS},
		{"ip", "netns", "add", l.clNS},
		{"ip", "link", "add", l.up0, "type", "veth", "peer", "name", l.up1},
		{"ip", "link", "set", l.up1, "netns", l.apNS},
		{"ip", "addr", "add", l.wnmsIP + "/30", "dev", l.up0},
		{"ip", "link", "set", l.up0, "up"},
		{"ip", "-n", l.apNS, "addr", "add", l.apIP + "/30", "dev", l.up1},
		{"ip", "-n", l.apNS, "link", "set", l.up1, "up"},
		{"ip", "-n", l.apNS, "link", "set", "lo", "up"},
		{"ip", "-n", l.apNS, "link", "add", l.port, "type", "veth", "peer", "name", l.cl},
		{"ip", "-n", l.apNS, "link", "set", l.cl, "netns", l.clNS},
		{"ip", "-n", l.apNS, "addr", "add", "10.232.0.1/24", "dev", l.port},
		{"ip", "-n", l.apNS, "link", "set", l.port, "up"},
		{"ip", "-n", l.clNS, "link", "set", "lo", "up"},
	} {
		sh(t, c...)
	}
	var link struct {
		Address string `json:"address"`
	}
	var links []struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal([]byte(sh(t, "ip", "-j", "-n", l.apNS, "link", "show", l.port)), &links); err != nil || len(links) != 1 {
		t.Fatalf("the port's MAC: %v", err)
	}
	link = links[0]
	l.portMAC = strings.ToUpper(link.Address)
	return l
}

func (l *lab) close() {
	for i := len(l.procs) - 1; i >= 0; i-- {
		if p := l.procs[i].Process; p != nil {
			syscall.Kill(-p.Pid, syscall.SIGKILL) // the whole pipeline
		}
		l.procs[i].Wait()
	}
	exec.Command("ip", "link", "del", l.up0).Run()
	exec.Command("ip", "netns", "del", l.clNS).Run()
	exec.Command("ip", "netns", "del", l.apNS).Run()
	if l.t.Failed() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for name, b := range l.logs {
			l.t.Logf("%s:\n%s", name, radiustest.Tail(b.String(), 40))
		}
	}
}

// start runs a shell pipeline in namespace ns until the test ends.
func (l *lab) start(name, ns, script string) *syncBuf {
	l.t.Helper()
	out := &syncBuf{}
	cmd := exec.Command("ip", "netns", "exec", ns, "sh", "-c", script)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("%s: %v", name, err)
	}
	l.procs = append(l.procs, cmd)
	l.mu.Lock()
	l.logs[name] = out
	l.mu.Unlock()
	return out
}

// startAP runs hostapd against wnms's RADIUS listeners and dnsmasq on the
// port, both logging to wnms's syslog over TCP.
func (l *lab) startAP(auth, acct, syslogAddr, secret string) {
	t := l.t
	_, authPort, _ := net.SplitHostPort(auth)
	_, acctPort, _ := net.SplitHostPort(acct)
	_, slPort, _ := net.SplitHostPort(syslogAddr)
	// The README's hostapd block as written, with the lab's addresses,
	// ports and secret, on a wired port.
	block := readmeBlock(t, "<!-- lab: hostapd.conf -->")
	set := map[string]string{"own_ip_addr": l.apIP, "auth_server_addr": l.wnmsIP, "auth_server_port": authPort,
		"auth_server_shared_secret": secret, "acct_server_addr": l.wnmsIP, "acct_server_port": acctPort,
		"acct_server_shared_secret": secret}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		k, _, ok := strings.Cut(line, "=")
		if v, mine := set[k]; ok && mine {
			line = k + "=" + v
		}
		lines = append(lines, line)
	}
	conf := filepath.Join(l.dir, "hostapd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`interface=%s
driver=wired
logger_stdout=-1
logger_stdout_level=1
eap_reauth_period=0
use_pae_group_addr=1
%s
`, l.port, strings.Join(lines, "\n"))), 0o600)
	logger := fmt.Sprintf("logger -T --rfc3164 -n %s -P %s", l.wnmsIP, slPort)
	l.start("hostapd", l.apNS, fmt.Sprintf("stdbuf -oL hostapd %s | tee -a %s/hostapd.log | %s -t hostapd",
		conf, l.dir, logger))
	l.start("dnsmasq", l.apNS, fmt.Sprintf(`dnsmasq --no-daemon --interface=%s --bind-interfaces --except-interface=lo --port=0 `+
		`--dhcp-range=10.232.0.50,10.232.0.99,255.255.255.0,1h --dhcp-leasefile=%s/leases --log-facility=- 2>&1 | `+
		`stdbuf -oL sed -n 's/^.*dnsmasq-dhcp\[[0-9]*\]: //p' | tee -a %s/dnsmasq.log | %s -t dnsmasq-dhcp`,
		l.port, l.dir, l.dir, logger))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(l.file("hostapd.log"), "AP-ENABLED") {
		if time.Now().After(deadline) {
			t.Fatalf("hostapd did not start:\n%s", l.logs["hostapd"].String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readmeBlock returns the first fenced block after marker in the README.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("the README has no %s", marker)
	}
	_, rest, _ = strings.Cut(rest, "```")
	_, rest, _ = strings.Cut(rest, "\n")
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("no block after %s", marker)
	}
	return block
}

func (l *lab) file(name string) string {
	b, _ := os.ReadFile(filepath.Join(l.dir, name))
	return string(b)
}

// connect brings a client with MAC mac onto the port: wpa_supplicant
// with PEAP/MSCHAPv2 as alice, then (when it authenticated) a DHCP
// lease. It returns whether EAP succeeded, and ends the client.
func (l *lab) connect(mac, password string, wait time.Duration) bool {
	t := l.t
	t.Helper()
	for _, c := range [][]string{
		{"ip", "-n", l.clNS, "link", "set", l.cl, "down"},
		{"ip", "-n", l.clNS, "link", "set", l.cl, "address", mac},
		{"ip", "-n", l.clNS, "link", "set", l.cl, "up"},
	} {
		sh(t, c...)
	}
	conf := filepath.Join(l.dir, "wpa-"+mac+".conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`ap_scan=0
network={
	key_mgmt=IEEE8021X
	eap=PEAP
	identity="alice"
	password=%q
	phase2="auth=MSCHAPV2"
	eapol_flags=0
}
`, password)), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", l.clNS, "wpa_supplicant", "-D", "wired", "-i", l.cl, "-c", conf)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	var seen strings.Builder
	ok := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "CTRL-EVENT-EAP-SUCCESS") {
			ok = true
			break
		}
		if strings.Contains(sc.Text(), "CTRL-EVENT-EAP-FAILURE") {
			break
		}
	}
	l.mu.Lock()
	l.logs["wpa_supplicant "+mac] = &syncBuf{}
	l.logs["wpa_supplicant "+mac].Write([]byte(seen.String()))
	l.mu.Unlock()
	if ok {
		dhcp := exec.Command("ip", "netns", "exec", l.clNS, "busybox", "udhcpc", "-i", l.cl, "-n", "-q", "-t", "5", "-s", "/bin/true")
		if b, err := dhcp.CombinedOutput(); err != nil {
			t.Fatalf("udhcpc: %v\n%s", err, b)
		}
	}
	return ok
}

// TestLab8021X runs the lab: the right password makes a Success with the
// AAA and DHCP latencies, a wrong one a 2/202 Failure, and with
// FreeRADIUS stopped the authentications fail 2/203 and the lab's floor
// (three of four clients failing) shows a connectivity anomaly against
// its history.
func TestLab8021X(t *testing.T) {
	t.Parallel()
	radiustest.NeedTool(t, "ip", "hostapd", "wpa_supplicant", "dnsmasq", "busybox", "logger", "stdbuf", "tee", "sed")
	if os.Geteuid() != 0 {
		if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
			t.Fatal("the lab needs root for its network namespaces (WNMS_TEST_REQUIRE_TOOLS=1)")
		}
		t.Skip("the lab needs root for its network namespaces")
	}
	// FreeRADIUS takes wnms as a client with the README's clients.conf
	// block, wnms's address being the loopback here.
	clients := readmeBlock(t, "<!-- lab: clients.conf -->")
	upstreamSecret := ""
	var conf []string
	for _, line := range strings.Split(clients, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch strings.TrimSpace(k) {
		case "ipaddr":
			line = "\tipaddr = 127.0.0.1"
		case "secret":
			upstreamSecret = strings.TrimSpace(v)
		}
		conf = append(conf, line)
	}
	if upstreamSecret == "" {
		t.Fatalf("no secret in the README's clients.conf block:\n%s", clients)
	}
	fr := radiustest.StartWithClients(t, strings.Join(conf, "\n"), "-X")
	l := newLab(t)
	srv := startSourcesServer(t, l.wnmsIP, "--baseline-min-samples", "3")
	srv.addAP(l.portMAC, "lab-ap-1", l.apIP, l.portMAC, "lab")
	// The floor's history: this quarter hour of each of the last seven
	// days, ten clients connecting without a failure. The failures below
	// must fall in the same quarter hour: a run that would cross into the
	// next one (which has no history) waits for it to begin.
	now := startOfSlotWithRoom(2 * time.Minute)
	var history []any
	for d := 1; d <= 7; d++ {
		for c := range 10 {
			history = append(history, map[string]any{"eventId": fmt.Sprintf("hist-%d-%d", d, c), "eventType": "Success",
				"macAddress": fmt.Sprintf("02:00:00:00:%02x:%02x", d, c), "bssid": l.portMAC, "channel": 36, "ssid": "lab",
				"timestamp": now.Add(-time.Duration(d)*24*time.Hour - time.Duration(c)*time.Second).UnixMilli()})
		}
	}
	srv.must("history", "POST", "/V5/ingest/clientevents", history)
	const nasSecret = "lab-nas-secret"
	srv.must("data sources", "PUT", "/V5/datasources", map[string]any{
		"radius": map[string]any{
			// Longer than FreeRADIUS's reject_delay (1 s): a Reject comes late.
			"upstreams":           []any{map[string]any{"address": fr.Auth, "secret": upstreamSecret, "timeoutMs": 2500}},
			"accountingUpstreams": []any{},
		},
		"sources": []any{map[string]any{"name": "lab AP", "cidr": l.apIP + "/32", "radiusSecret": nasSecret, "syslog": true,
			"locationId": map[string]any{"type": "locallocationid", "id": srv.floor}}},
	})
	l.startAP(srv.l.RadiusAuth, srv.l.RadiusAcct, srv.l.Syslog, nasSecret)

	find := srv.find

	// The right password.
	if !l.connect("02:00:00:00:0c:01", "alice-pw", 30*time.Second) {
		t.Fatal("the right password did not authenticate through wnms")
	}
	ok := find("02:00:00:00:0C:01", eventType("Success"))
	// One Success of both views: syslog's (its association), with the
	// accept's aaaLatency and eventId (PEAP's exchanges through the proxy
	// take milliseconds).
	if id, _ := ok["eventId"].(string); !strings.HasPrefix(id, "radius-") || ok["associationTimestamp"] == nil ||
		ok["aaaLatency"] == nil || ok["aaaLatency"].(float64) <= 0 ||
		ok["dhcpLatency"] == nil || ok["associatedAPName"] != "lab-ap-1" ||
		ok["locationId"].(map[string]any)["id"] != float64(srv.floor) {
		t.Errorf("Success: %v", ok)
	}
	// A wrong one.
	if l.connect("02:00:00:00:0c:02", "not-alices", 30*time.Second) {
		t.Fatal("a wrong password authenticated")
	}
	find("02:00:00:00:0C:02", failure(202))
	// FreeRADIUS stops: the authentications fail as unreachable.
	fr.Stop()
	for i := 3; i <= 4; i++ {
		mac := fmt.Sprintf("02:00:00:00:0c:%02x", i)
		// wnms gives up on the upstream after its timeout (2.5 s).
		if l.connect(mac, "alice-pw", 4*time.Second) {
			t.Fatalf("%s authenticated with FreeRADIUS stopped", mac)
		}
		find(strings.ToUpper(mac), failure(203))
	}
	// And the floor's connectivity in this quarter hour is anomalous
	// against its history.
	var points []point
	r := srv.must("baseline", "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity?locationid=%d&fromtime=%d&totime=%d",
		srv.floor, now.Add(-15*time.Minute).UnixMilli(), time.Now().UnixMilli()), nil)
	json.Unmarshal([]byte(r.body), &points)
	anomalous := false
	for _, p := range points {
		anomalous = anomalous || (p.Anomalous && p.NoClientsAuthFailure >= 3)
	}
	if !anomalous {
		t.Errorf("no connectivity anomaly on the lab's floor: %+v", points)
	}
}

// startOfSlotWithRoom returns now, or, when less than room is left of the
// current quarter hour (a baseline slot), waits for the next one to begin
// and returns then.
func startOfSlotWithRoom(room time.Duration) time.Time {
	now := time.Now()
	if next := now.Truncate(15 * time.Minute).Add(15 * time.Minute); next.Sub(now) < room {
		// A wait for wall-clock time itself, not for something to
		// happen: the slot boundary is the clock, and there is nothing
		// else to poll.
		time.Sleep(time.Until(next) + time.Second)
		now = time.Now()
	}
	return now
}
