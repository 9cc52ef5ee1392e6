package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Debian package's unit (packaging/wnms.service) passes systemd's own
// check, and its sandbox keeps systemd-analyze's exposure score at 2.0 or
// below ("OK"). systemd-analyze verify wants ExecStart's binary to exist:
// the check runs on a copy whose ExecStart is this test binary.
func TestSystemdUnitVerifies(t *testing.T) {
	needTools(t, "systemd-analyze")
	unit, err := os.ReadFile("../../packaging/wnms.service")
	if err != nil {
		t.Fatal(err)
	}
	const exec0 = "ExecStart=/usr/bin/wnms serve\n"
	if !bytes.Contains(unit, []byte(exec0)) {
		t.Fatalf("the unit does not start %q", exec0)
	}
	for _, want := range []string{"User=wnms", "StateDirectory=wnms", "AmbientCapabilities=CAP_NET_BIND_SERVICE\n",
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE\n", "NoNewPrivileges=yes", "ProtectSystem=strict", "Restart=on-failure",
		"EnvironmentFile=/etc/default/wnms"} {
		if !bytes.Contains(unit, []byte(want)) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wnms.service")
	if err := os.WriteFile(path, bytes.Replace(unit, []byte("/usr/bin/wnms"), []byte(self), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// Its complaints about other units on this machine are theirs.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "wnms.service") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=20", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: exposure above 2.0 (%v):\n%s", err, out)
	}
}

// Every variable the package's /etc/default/wnms sets or shows commented
// out is the environment twin of a flag of wnms serve, and each comes
// with a comment saying what it does.
func TestDefaultConfigNamesRealFlags(t *testing.T) {
	conf, err := os.ReadFile("../../packaging/wnms.default")
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--help"}, func(string) string { return "" }, &help, &help); !errors.Is(err, errHelp) {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`\((WNMS_[A-Z_]+)\)`).FindAllStringSubmatch(help.String(), -1) {
		known[m[1]] = true
	}
	lines := strings.Split(string(conf), "\n")
	seen := 0
	for i, line := range lines {
		m := regexp.MustCompile(`^#?(WNMS_[A-Z_]+)=`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		if !known[m[1]] {
			t.Errorf("line %d: %s is no flag of wnms serve", i+1, m[1])
		}
		if i == 0 || !strings.HasPrefix(lines[i-1], "#") {
			t.Errorf("line %d: %s has no comment above it", i+1, m[1])
		}
	}
	if seen < 5 || !strings.Contains(string(conf), "\nWNMS_DATA=/var/lib/wnms\n") {
		t.Errorf("the default config sets %d variables and must set WNMS_DATA=/var/lib/wnms", seen)
	}
}
