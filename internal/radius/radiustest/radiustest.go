// Package radiustest runs the real RADIUS programs of Debian for tests:
// FreeRADIUS 3 as an upstream with a users file (alice / alice-pw; carol /
// carol-pw, whose accept gives Framed-IP-Address 10.0.0.77) and
// the eap module's test certificates, and radclient.
package radiustest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// UpstreamSecret is the secret FreeRADIUS shares with its client
// 127.0.0.1.
const UpstreamSecret = "upstream-secret"

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// FreeRADIUS is a FreeRADIUS server run by a test: Auth and Acct are its
// listeners (127.0.0.1), Dir its configuration (certs/ holds the CA, the
// server's and a client certificate).
type FreeRADIUS struct {
	Dir, Auth, Acct string
	opts            []string
	cmd             *exec.Cmd
	out             *syncBuffer
	stopOnce        sync.Once
	exited          chan struct{}
}

// Start runs FreeRADIUS in the foreground from a copy of
// Debian's configuration in a temporary directory: a users file with
// alice, a client 127.0.0.1, free ports, the eap module's test
// certificates made there by its own Makefile (openssl), and no user
// switch.
func Start(t testing.TB) *FreeRADIUS {
	t.Helper()
	return StartWith(t, "-X")
}

// StartWith is Start with other options: "-X" for
// the debug output the tests show on failure, "-l", "stdout" for speed.
func StartWith(t testing.TB, opts ...string) *FreeRADIUS {
	t.Helper()
	return StartWithClients(t, "client lab {\n\tipaddr = 127.0.0.1\n\tsecret = "+UpstreamSecret+"\n}\n", opts...)
}

// StartWithClients is StartWith with clients as the whole of
// clients.conf (the clients FreeRADIUS answers).
func StartWithClients(t testing.TB, clients string, opts ...string) *FreeRADIUS {
	t.Helper()
	NeedTool(t, "freeradius", "make", "openssl")
	const etc = "/etc/freeradius/3.0"
	if _, err := os.Stat(etc); err != nil {
		NeedTool(t, etc) // skip or fail as for a missing program
	}
	// Its ports were free when chosen; a test running beside it may take
	// one before FreeRADIUS binds it. Then it starts again, on others.
	f, err := StartIn(t.TempDir(), clients, opts...)
	for try := 1; err != nil && try < 3 && strings.Contains(err.Error(), "Address already in use"); try++ {
		f, err = StartIn(t.TempDir(), clients, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Stop()
		if t.Failed() {
			t.Logf("FreeRADIUS output (tail):\n%s", Tail(f.out.String(), 60))
		}
	})
	return f
}

// StartIn is StartWithClients outside a test (a benchmark): the
// configuration goes in dir, which the caller removes after Stop.
func StartIn(dir, clients string, opts ...string) (*FreeRADIUS, error) {
	const etc = "/etc/freeradius/3.0"
	if out, err := exec.Command("cp", "-a", etc+"/.", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cp -a %s: %v\n%s", etc, err, out)
	}
	var editErr error
	edit := func(name string, f func(string) string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(p, []byte(f(string(b))), 0o600)
		}
		if err != nil && editErr == nil {
			editErr = err
		}
	}
	for _, d := range []string{"log", "run"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	edit("radiusd.conf", func(s string) string {
		s = regexp.MustCompile(`(?m)^\s*(user|group) = freerad$`).ReplaceAllString(s, "")
		s = regexp.MustCompile(`(?m)^logdir = .*$`).ReplaceAllString(s, "logdir = "+dir+"/log")
		s = regexp.MustCompile(`(?m)^run_dir = .*$`).ReplaceAllString(s, "run_dir = "+dir+"/run")
		return regexp.MustCompile(`(?m)^raddbdir = .*$`).ReplaceAllString(s, "raddbdir = "+dir)
	})
	var ports [3]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	authPort, acctPort, innerPort := ports[0], ports[1], ports[2]
	edit("sites-available/default", func(s string) string {
		// Keep the IPv4 listeners, on 127.0.0.1 and the ports chosen.
		var out []string
		var block []string
		for _, l := range strings.SplitAfter(s, "\n") {
			switch {
			case block == nil && strings.HasPrefix(l, "listen {"):
				block = []string{l}
			case block != nil:
				block = append(block, l)
				if strings.HasPrefix(l, "}") {
					b := strings.Join(block, "")
					block = nil
					if regexp.MustCompile(`(?m)^\s*ipv6addr\s*=`).MatchString(b) {
						continue
					}
					port := authPort
					if regexp.MustCompile(`(?m)^\s*type = acct`).MatchString(b) {
						port = acctPort
					}
					b = regexp.MustCompile(`(?m)^\tipaddr = \*`).ReplaceAllString(b, "\tipaddr = 127.0.0.1")
					b = regexp.MustCompile(`(?m)^\tport = 0`).ReplaceAllString(b, fmt.Sprintf("\tport = %d", port))
					out = append(out, b)
				}
			default:
				out = append(out, l)
			}
		}
		return strings.Join(out, "")
	})
	edit("sites-available/inner-tunnel", func(s string) string {
		return strings.Replace(s, "port = 18120", fmt.Sprintf("port = %d", innerPort), 1)
	})
	edit("mods-available/eap", func(s string) string {
		return strings.NewReplacer(
			"private_key_file = /etc/ssl/private/ssl-cert-snakeoil.key", "private_key_file = ${certdir}/server.key",
			"certificate_file = /etc/ssl/certs/ssl-cert-snakeoil.pem", "certificate_file = ${certdir}/server.pem",
			"ca_file = /etc/ssl/certs/ca-certificates.crt", "ca_file = ${cadir}/ca.pem").Replace(s)
	})
	edit("mods-config/files/authorize", func(s string) string {
		// carol's accept gives her an address (Framed-IP-Address), as a
		// server that assigns addresses does.
		return "alice Cleartext-Password := \"alice-pw\"\n" +
			"carol Cleartext-Password := \"carol-pw\"\n\tFramed-IP-Address = 10.0.0.77\n" + s
	})
	edit("clients.conf", func(string) string { return clients })
	if editErr != nil {
		return nil, editErr
	}
	// The CA, the server's certificate and a client certificate signed by
	// the same CA, as the eap module's README makes them.
	mk := exec.Command("make", "ca.pem", "server.pem", "client.pem")
	mk.Dir = filepath.Join(dir, "certs")
	if out, err := mk.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("make certificates: %v\n%s", err, out)
	}
	f := &FreeRADIUS{Dir: dir, Auth: fmt.Sprintf("127.0.0.1:%d", authPort), Acct: fmt.Sprintf("127.0.0.1:%d", acctPort), opts: opts}
	if err := f.launch(); err != nil {
		return nil, err
	}
	return f, nil
}

// launch runs FreeRADIUS from f.Dir and waits until it is ready.
func (f *FreeRADIUS) launch() error {
	f.out, f.exited, f.stopOnce = &syncBuffer{}, make(chan struct{}), sync.Once{}
	f.cmd = exec.Command("freeradius", append([]string{"-f", "-d", f.Dir}, f.opts...)...)
	f.cmd.Stdout, f.cmd.Stderr = f.out, f.out
	if err := f.cmd.Start(); err != nil {
		return err
	}
	exited := f.exited
	go func() { f.cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(60 * time.Second) // a loaded machine may take long
	for !strings.Contains(f.out.String(), "Ready to process requests") {
		select {
		case <-f.exited:
			return fmt.Errorf("FreeRADIUS exited:\n%s", Tail(f.out.String(), 40))
		default:
		}
		if time.Now().After(deadline) {
			f.Stop()
			return fmt.Errorf("FreeRADIUS not ready:\n%s", Tail(f.out.String(), 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Restart starts a stopped FreeRADIUS again, on the same ports and
// configuration.
func (f *FreeRADIUS) Restart() error { return f.launch() }

// Stop ends FreeRADIUS and waits for it.
func (f *FreeRADIUS) Stop() {
	f.stopOnce.Do(func() {
		f.cmd.Process.Kill()
		<-f.exited
	})
}

func Tail(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func Run(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Output is what FreeRADIUS printed so far.
func (f *FreeRADIUS) Output() string { return f.out.String() }

// Radclient sends the attributes (one per line) as one request of kind
// ("auth" or "acct") to addr and returns its output and whether an
// answer came.
func Radclient(t testing.TB, addr, kind, secret string, attrs ...string) (string, bool) {
	t.Helper()
	NeedTool(t, "radclient")
	cmd := exec.Command("radclient", "-x", "-r", "1", "-t", "2", addr, kind, secret)
	cmd.Stdin = strings.NewReader(strings.Join(attrs, "\n") + "\n")
	// radclient exits 1 on a Reject too: whether an answer came is in
	// what it prints.
	out, _ := cmd.CombinedOutput()
	return string(out), strings.Contains(string(out), "Received ")
}

// FreePort returns a UDP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort() (int, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// NeedTool skips the test when a program is missing, unless
// WNMS_TEST_REQUIRE_TOOLS=1 (CI), where it fails.
func NeedTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s is required (WNMS_TEST_REQUIRE_TOOLS=1): %v", n, err)
			}
			t.Skipf("%s not installed", n)
		}
	}
}
