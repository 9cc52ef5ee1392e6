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
)

// The README's walk-through ("A first session with curl") must work as
// written against a fresh server: every shell block runs, in order, in one
// shell, and prints what the README shows after it: the same JSON objects
// (compared by their fields, since ids, keys and dates differ from run to
// run) and the same first word of every other line (statuses, types). It
// needs bash, curl, jq, base64, file, OpenBSD netcat (nc) and openssl; without them it is skipped, unless
// WNMS_TEST_REQUIRE_TOOLS=1 (as in CI).
func TestREADMEWalkthrough(t *testing.T) {
	needTools(t, "bash", "curl", "jq", "base64", "file", "awk", "nc", "openssl")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start, end := strings.Index(s, "## A first session with curl"), strings.Index(s, "## Configuration")
	if start < 0 || end < start {
		t.Fatal("the README has no walk-through section")
	}
	steps := parseWalkthrough(s[start:end])
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
		start, end = strings.Index(s, "## SNMP\n"), strings.Index(s, "## Errors")
		if start < 0 || end < start {
			t.Fatal("the README has no SNMP section")
		}
		snmpSteps := parseWalkthrough(s[start:end])
		if len(snmpSteps) < 4 {
			t.Fatalf("found only %d shell blocks in the SNMP section", len(snmpSteps))
		}
		steps = append(steps, snmpSteps...)
	}

	// "Connect your network": its calls go on from the same session (the
	// hostapd block runs in the 802.1X lab, lab_test.go).
	start, end = strings.Index(s, "## Connect your network"), strings.Index(s, "## Running on PostgreSQL")
	if start < 0 || end < start {
		t.Fatal("the README has no section Connect your network")
	}
	if connect := parseWalkthrough(s[start:end]); len(connect) != 2 {
		t.Fatalf("found %d shell blocks in Connect your network, want 2", len(connect))
	} else {
		steps = append(steps, connect...)
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

// readmeDemo runs the README's demo section against the --demo server l,
// whose data directory is dir/wnms-demo: every block after the one that
// starts the server (which is the caller's) prints what the README shows.
// TestServeDemo calls it, so that one demo backfill serves both.
func readmeDemo(t *testing.T, l listening, dir string, server func() string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start, end := strings.Index(s, "## A live demo network in one command"), strings.Index(s, "## A first session with curl")
	if start < 0 || end < start {
		t.Fatal("the README has no demo section")
	}
	var steps []walkStep
	for _, st := range parseWalkthrough(s[start:end]) {
		if !strings.HasPrefix(st.script, "go run ./cmd/wnms serve --demo --data wnms-demo") {
			steps = append(steps, st)
		}
	}
	if len(steps) < 4 {
		t.Fatalf("found only %d shell blocks in the demo section", len(steps))
	}
	runSteps(t, steps, dir, strings.NewReplacer("127.0.0.1:8080", l.API), []string{"HOME=" + dir}, server)
}

// runSteps runs README shell blocks in dir, in order, each in a fresh bash
// that first replays the variable assignments of the blocks before it
// (so variables carry over as in one terminal), and compares what each
// prints with the output block the README shows after it.
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
			t.Errorf("block %d prints something else than the README shows:\n%s\n--- got:\n%s\n--- README:\n%s",
				i+1, st.script, out, st.want)
		}
	}
}

// The README's cluster example runs as written: three wnms processes (the
// test binary standing in for ./wnms), forwarding, fan-out, a child
// stopped.
func TestREADMECluster(t *testing.T) {
	needTools(t, "bash", "curl", "jq")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "## Cluster\n")
	if start < 0 {
		t.Fatal("the README has no Cluster section")
	}
	end := strings.Index(s[start+5:], "\n## ")
	section := s[start:]
	if end >= 0 {
		section = s[start : start+5+end]
	}
	steps := parseWalkthrough(section)
	if len(steps) < 5 {
		t.Fatalf("found only %d shell blocks in the Cluster section", len(steps))
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
