// Package snmptest runs net-snmp's own tools (Debian's snmp and
// snmptrapd packages) for tests: a trap receiver on a loopback port, and
// the command-line managers, kept away from the machine's MIBs and
// persistent state. Without the tools a test is skipped, unless
// WNMS_TEST_REQUIRE_TOOLS is set (as in CI), when it fails.
package snmptest

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// NeedTool returns the path of a net-snmp tool, or skips (or fails) the
// test without it.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") != "" {
			t.Fatalf("%s is required (WNMS_TEST_REQUIRE_TOOLS is set): %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// Env is an environment for net-snmp tools: no MIBs loaded (numeric OIDs
// in and out), a private directory for engine state and configuration.
func Env(t testing.TB) []string {
	dir := t.TempDir()
	return append(os.Environ(), "MIBS=", "MIBDIRS="+dir, "SNMP_PERSISTENT_DIR="+dir, "SNMPCONFPATH="+dir, "HOME="+dir)
}

// Run runs a net-snmp command and returns its combined output.
func Run(t testing.TB, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, NeedTool(t, name), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Trapd is a running snmptrapd and what it has printed.
type Trapd struct {
	Port int
	mu   sync.Mutex
	out  bytes.Buffer
}

func (d *Trapd) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.Write(p)
}

// Text is everything printed so far.
func (d *Trapd) Text() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// WaitFor waits (up to 10 s) until the output holds every string of want
// and returns it.
func (d *Trapd) WaitFor(t testing.TB, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := d.Text()
		missing := ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("snmptrapd never printed %q; it printed:\n%s", missing, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// StartTrapd runs snmptrapd with conf (snmptrapd.conf lines) on a
// loopback port, printing every trap with numeric OIDs, until the test
// ends.
func StartTrapd(t testing.TB, conf string) *Trapd {
	t.Helper()
	bin := NeedTool(t, "snmptrapd")
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(c.LocalAddr().String())
	c.Close()
	dir := t.TempDir()
	confFile := filepath.Join(dir, "snmptrapd.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &Trapd{}
	d.Port, _ = strconv.Atoi(port)
	// -Le: stderr is unbuffered, so a trap shows as soon as it arrives.
	cmd := exec.Command(bin, "-f", "-Le", "-On", "-C", "-c", confFile, "-n", "udp:127.0.0.1:"+port)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir, "SNMP_PERSISTENT_DIR="+dir, "HOME="+dir)
	cmd.Stdout, cmd.Stderr = d, d
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	d.WaitFor(t, "NET-SNMP version")
	return d
}
