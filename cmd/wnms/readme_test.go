package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/radius/radiustest"
)

// The walk-through (docs/walkthrough.md) must work as written against a
// fresh server: every shell block runs, in order, in one shell, and prints
// what the file shows after it: the same JSON objects (compared by their
// fields, since ids, keys and dates differ from run to run) and the same
// first word of every other line (statuses, types). It needs bash, curl,
// jq, base64, file, OpenBSD netcat (nc) and openssl, and for its SNMP part
// net-snmp's tools; without them it is skipped (the SNMP part left out),
// unless WNMS_TEST_REQUIRE_TOOLS=1 (as in CI).
func TestDocsWalkthrough(t *testing.T) {
	needTools(t, "bash", "curl", "jq", "base64", "file", "awk", "nc", "openssl")
	steps := parseWalkthrough(docSection(t, "docs/walkthrough.md", "A first session", "SNMP"))
	if len(steps) < 10 {
		t.Fatalf("found only %d shell blocks in the walk-through", len(steps))
	}
	// The SNMP section goes on from the walk-through's session, with
	// net-snmp's tools.
	snmpTools := true
	for _, tool := range []string{"snmptrapd", "snmpget", "snmpwalk"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s is missing and WNMS_TEST_REQUIRE_TOOLS=1", tool)
			}
			snmpTools = false
		}
	}
	if snmpTools {
		snmpSteps := parseWalkthrough(docSection(t, "docs/walkthrough.md", "SNMP", ""))
		if len(snmpSteps) < 4 {
			t.Fatalf("found only %d shell blocks in the SNMP section", len(snmpSteps))
		}
		steps = append(steps, snmpSteps...)
	}

	dir := t.TempDir()
	l, _, stderr, _ := bootServe(t, map[string]string{}, "--data", filepath.Join(dir, "wnms-data"), "--webhook-allow-private")
	// The SNMP section runs from the repository's directory (mibs/), and
	// its trap receiver gets a free port.
	if err := os.Symlink(filepath.Join(filepath.Dir(filepath.Dir(must(os.Getwd()))), "mibs"), filepath.Join(dir, "mibs")); err != nil {
		t.Fatal(err)
	}
	trapPort := freeUDPPort(t)
	_, hookPort, _ := net.SplitHostPort(freeTCPPort(t))
	replacer := strings.NewReplacer("127.0.0.1:8080", l.API, "127.0.0.1:8081", l.Analytics, "127.0.0.1:1161", l.SNMPAgent,
		"127.0.0.1:9162", "127.0.0.1:"+trapPort, `"trapPort": 9162`, `"trapPort": `+trapPort,
		"127.0.0.1 9099", "127.0.0.1 "+hookPort, "127.0.0.1:9099", "127.0.0.1:"+hookPort)
	t.Cleanup(func() { // a receiver left running by a failed step
		if b, err := os.ReadFile(filepath.Join(dir, "traps", "snmptrapd.pid")); err == nil {
			exec.Command("kill", strings.TrimSpace(string(b))).Run()
		}
	})
	runSteps(t, steps, dir, replacer, []string{"SNMP_PERSISTENT_DIR=" + filepath.Join(dir, "snmp-state"), "HOME=" + dir}, stderr.String)
}

// The README's "Connect your network" works as written, from the login
// to the self-test: its shell blocks run in order against a server with
// its RADIUS and syslog listeners on (free ports of the loopback, for
// 1812, 1813 and 514), FreeRADIUS upstream (taking wnms as a client with
// the README's clients.conf block, wnms's address the loopback), and
// radclient and logger as the README calls them; each prints what the
// README shows. The block that starts the server is the test's own.
func TestREADMEConnect(t *testing.T) {
	t.Parallel()
	needTools(t, "bash", "curl", "jq", "radclient", "logger")
	steps := parseWalkthrough(docSection(t, "README.md", "Connect your network", ""))
	var run []walkStep
	for _, st := range steps {
		if !strings.Contains(st.script, "wnms serve") {
			run = append(run, st)
		}
	}
	if len(steps)-len(run) != 1 || len(run) < 6 {
		t.Fatalf("Connect your network: %d shell blocks, %d of them to run; want one that starts the server and at least 6 more", len(steps), len(run))
	}
	var clients []string
	for _, line := range strings.Split(readmeBlock(t, "<!-- lab: clients.conf -->"), "\n") {
		if k, _, _ := strings.Cut(strings.TrimSpace(line), "="); strings.TrimSpace(k) == "ipaddr" {
			line = "\tipaddr = 127.0.0.1"
		}
		clients = append(clients, line)
	}
	fr := radiustest.StartWithClients(t, strings.Join(clients, "\n"), "-X")
	dir := t.TempDir()
	l, _, stderr, _ := bootServe(t, nil, "--data", filepath.Join(dir, "wnms-data"), "--radius-auth-listen", "127.0.0.1:0",
		"--radius-acct-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")
	_, syslogPort, _ := net.SplitHostPort(l.Syslog)
	replacer := strings.NewReplacer("127.0.0.1:8080", l.API, "127.0.0.1:1812", l.RadiusAuth, "127.0.0.1:1813", l.RadiusAcct,
		"-P 514", "-P "+syslogPort, "10.0.0.10:1812", fr.Auth, "10.0.0.10:1813", fr.Acct)
	runSteps(t, run, dir, replacer, []string{"HOME=" + dir}, func() string {
		return stderr.String() + "\n--- FreeRADIUS:\n" + radiustest.Tail(fr.Output(), 60)
	})
}

// docSection is the text of the section "## heading" of file (a path
// from the repository's top), up to the section "## until" ("" for the
// next section of the same level, or the end of the file).
func docSection(t *testing.T, file, heading, until string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	s := "\n" + string(b)
	start := strings.Index(s, "\n## "+heading+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", file, heading)
	}
	rest := s[start+1:]
	var end int
	if until != "" {
		end = strings.Index(rest, "\n## "+until+"\n")
		if end < 0 {
			t.Fatalf("%s has no section %q after %q", file, until, heading)
		}
	} else if end = strings.Index(rest[3:], "\n## "); end >= 0 {
		end += 3
	} else {
		end = len(rest)
	}
	return rest[:end]
}

// readmeDemo runs the README's demo section against the --demo server l,
// whose data directory is dir/wnms-demo: every block after the one that
// starts the server (which is the caller's) prints what the README shows.
// TestServeDemo calls it, so that one demo backfill serves both.
func readmeDemo(t *testing.T, l listening, dir string, server func() string) {
	t.Helper()
	var steps []walkStep
	for _, st := range parseWalkthrough(docSection(t, "README.md", "A live demo network in one command", "")) {
		if !strings.HasPrefix(st.script, "go run ./cmd/wnms serve --demo --data wnms-demo") {
			steps = append(steps, st)
		}
	}
	if len(steps) < 4 {
		t.Fatalf("found only %d shell blocks in the demo section", len(steps))
	}
	runSteps(t, steps, dir, strings.NewReplacer("127.0.0.1:8080", l.API), []string{"HOME=" + dir}, server)
}

// runSteps runs the shell blocks of a document in dir, in order, each in a fresh bash
// that first replays the variable assignments of the blocks before it
// (so variables carry over as in one terminal), and compares what each
// prints with the output block the document shows after it.
func runSteps(t *testing.T, steps []walkStep, dir string, replacer *strings.Replacer, env []string, server func() string) {
	t.Helper()
	for i, st := range steps {
		script := replacer.Replace(st.script)
		var prior strings.Builder
		for _, p := range steps[:i] {
			for _, line := range strings.Split(p.script, "\n") {
				if assignment.MatchString(line) {
					prior.WriteString(replacer.Replace(line))
					prior.WriteString("\n")
				}
			}
		}
		cmd := exec.Command("bash", "-c", "set -eo pipefail\n"+prior.String()+script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("block %d failed: %v\n%s\n--- output:\n%s\n--- server:\n%s", i+1, err, st.script, out, server())
		}
		if st.want == "" {
			continue
		}
		got, want := outputShape(string(out)), outputShape(st.want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("block %d prints something else than the document shows:\n%s\n--- got:\n%s\n--- document:\n%s",
				i+1, st.script, out, st.want)
		}
	}
}

// The cluster example of docs/operations.md runs as written: three wnms
// processes (the test binary standing in for ./wnms), forwarding,
// fan-out, a child stopped.
func TestDocsCluster(t *testing.T) {
	needTools(t, "bash", "curl", "jq")
	steps := parseWalkthrough(docSection(t, "docs/operations.md", "Cluster", ""))
	if len(steps) < 5 {
		t.Fatalf("found only %d shell blocks in the Cluster section of docs/operations.md", len(steps))
	}
	dir := t.TempDir()
	pairs := []string{"./wnms ", os.Args[0] + " "}
	for _, port := range []string{"8180", "8181", "8280", "8281", "8080", "8081", "9180", "9280", "9464"} {
		pairs = append(pairs, "127.0.0.1:"+port, freeTCPPort(t))
	}
	t.Cleanup(func() { // processes a failed step left running
		for _, f := range []string{"child1.pid", "child2.pid", "parent.pid"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
				exec.Command("kill", "-9", strings.TrimSpace(string(b))).Run()
			}
		}
	})
	server := func() string {
		var b strings.Builder
		for _, f := range []string{"child1.log", "child2.log", "parent.log"} {
			l, _ := os.ReadFile(filepath.Join(dir, f))
			b.WriteString("--- " + f + "\n" + string(l))
		}
		return b.String()
	}
	runSteps(t, steps, dir, strings.NewReplacer(pairs...), []string{"WNMS_TEST_AS_WNMS=1", "HOME=" + dir}, server)
}

type walkStep struct {
	script string
	want   string // the output block that follows, if any
}

var fence = regexp.MustCompile("(?s)```(sh|json|)\n(.*?)```")

func parseWalkthrough(section string) []walkStep {
	var steps []walkStep
	for _, m := range fence.FindAllStringSubmatch(section, -1) {
		switch m[1] {
		case "sh":
			steps = append(steps, walkStep{script: m[2]})
		default:
			if len(steps) > 0 && steps[len(steps)-1].want == "" {
				steps[len(steps)-1].want = m[2]
			}
		}
	}
	return steps
}

var (
	assignment = regexp.MustCompile(`^[A-Z_]+=`)
	token      = regexp.MustCompile(`[A-Za-z0-9_-]{20,}`) // keys and ids that differ between runs
)

// outputShape reduces output to what does not change between runs: the
// sorted field names of each JSON object (or the kind of a JSON array or
// value), and the first word of every other line.
func outputShape(out string) []string {
	var shape []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		line = strings.TrimSpace(line)
		var v any
		if err := json.Unmarshal([]byte(line), &v); err == nil {
			shape = append(shape, jsonShape(v))
			continue
		}
		shape = append(shape, token.ReplaceAllString(strings.Fields(line + " .")[0], "<id>"))
	}
	return shape
}

func jsonShape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "{" + strings.Join(keys, ",") + "}"
	case []any:
		return "array"
	default:
		return "value"
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// freeUDPPort returns a UDP port on loopback that nothing listens on now.
func freeUDPPort(t *testing.T) string {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, port, _ := net.SplitHostPort(c.LocalAddr().String())
	return port
}

// needTools skips the test without one of the command-line tools, or
// fails it when WNMS_TEST_REQUIRE_TOOLS=1 (as in CI).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	if missing := missingTool(t, tools...); missing != "" {
		t.Skipf("%s is not installed", missing)
	}
}

// missingTool names the first of the command-line tools that is not
// installed ("" when all are), and fails the test instead when
// WNMS_TEST_REQUIRE_TOOLS=1 (as in CI).
func missingTool(t *testing.T, tools ...string) string {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("WNMS_TEST_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s is missing and WNMS_TEST_REQUIRE_TOOLS=1", tool)
			}
			return tool
		}
	}
	return ""
}
