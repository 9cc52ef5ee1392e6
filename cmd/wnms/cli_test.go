package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// runCLI runs wnms with args and an environment, and returns its exit
// status and output.
func runCLI(args []string, env map[string]string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	code = exitCode(err, &errb)
	return code, out.String(), errb.String()
}

// Help is asked for in every way a newcomer tries; it goes to stdout and
// exits 0, and each command shows its own flags.
func TestCLIHelp(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		want, wantN []string // in stdout / not in stdout
	}{
		{[]string{"--help"}, []string{"serve", "apikey create", "backup"}, nil},
		{[]string{"help"}, []string{"serve"}, nil},
		{[]string{"help", "serve"}, []string{"usage: wnms serve", "--listen"}, []string{"apikey create"}},
		{[]string{"help", "apikey", "create"}, []string{"usage: wnms apikey create", "--login"}, nil},
		{[]string{"serve", "--help"}, []string{"usage: wnms serve", "--listen", "WNMS_LISTEN", "--max-conns-per-addr", "--sqlite-synchronous"}, []string{"--key-id"}},
		{[]string{"serve", "-h"}, []string{"usage: wnms serve"}, nil},
		{[]string{"apikey", "--help"}, []string{"create", "list", "revoke"}, nil},
		{[]string{"apikey", "create", "--help"}, []string{"--login", "--role", "--customer", "--data"}, []string{"--key-id"}},
		{[]string{"apikey", "list", "-h"}, []string{"usage: wnms apikey list", "--database-url"}, []string{"--login", "--key-id"}},
		{[]string{"apikey", "revoke", "--help"}, []string{"usage: wnms apikey revoke [flags] KEYID", "--data"}, []string{"--login", "--key-id"}},
		{[]string{"migrate", "--help"}, []string{"usage: wnms migrate"}, nil},
		{[]string{"backup", "--help"}, []string{"usage: wnms backup", "pg_dump"}, nil},
		{[]string{"version", "--help"}, []string{"usage: wnms version"}, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(tc.args, nil)
			if code != 0 {
				t.Fatalf("exit %d; stderr %s", code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("help lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantN {
				if strings.Contains(out, w) {
					t.Errorf("help of another command shows %q:\n%s", w, out)
				}
			}
		})
	}
}

// A mistake in how wnms was called exits 2 and says what was wrong: the
// flag or variable, the bad value and what is expected.
func TestCLIMistakes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"no command", nil, nil, []string{"no command given"}},
		{"unknown command", []string{"serv"}, nil, []string{`unknown command "serv"`}},
		{"extra argument to serve", []string{"serve", "now"}, nil, []string{`unexpected argument "now"`}},
		{"extra argument to migrate", []string{"migrate", "--data", dir, "x"}, nil, []string{`unexpected argument "x"`}},
		{"extra argument to version", []string{"version", "x"}, nil, []string{`unexpected argument "x"`}},
		{"two key ids", []string{"apikey", "revoke", "--data", dir, "a", "b"}, nil, []string{`unexpected argument "b"`}},
		{"unknown action", []string{"apikey", "rotate"}, nil, []string{`unknown action "rotate"`}},
		{"unknown flag", []string{"serve", "--lisen", "x"}, nil, []string{"lisen"}},
		{"bad log level in the environment", []string{"serve"}, map[string]string{"WNMS_LOG_LEVEL": "verbose"},
			[]string{"WNMS_LOG_LEVEL", `"verbose"`, "debug, info, warn or error"}},
		{"bad log level on the command line", []string{"serve", "--log-level", "loud"}, nil, []string{"--log-level", `"loud"`, "debug, info, warn or error"}},
		{"server id not a number", []string{"serve"}, map[string]string{"WNMS_SERVER_ID": "abc"}, []string{"WNMS_SERVER_ID", `"abc"`, "whole number"}},
		{"server id flag not a number", []string{"serve", "--server-id", "abc"}, nil, []string{"--server-id", `"abc"`, "whole number"}},
		{"duration", []string{"serve", "--shutdown-timeout", "soon"}, nil, []string{"--shutdown-timeout", `"soon"`, "duration"}},
		{"create without login", []string{"apikey", "create", "--data", dir}, nil, []string{"--login is required"}},
		{"pool of one for migrate", []string{"migrate", "--data", dir, "--database-max-conns", "1"}, nil,
			[]string{"--database-max-conns 1", "must be 2 to 1000"}},
		{"pool of none for apikey", []string{"apikey", "list", "--data", dir}, map[string]string{"WNMS_DATABASE_MAX_CONNS": "0"},
			[]string{"WNMS_DATABASE_MAX_CONNS 0", "must be 2 to 1000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(tc.args, tc.env)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// A data directory that cannot hold the store is reported as such, not as
// a failure to open some file inside it.
func TestCLIDataDirectoryProblems(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := func(dir string, more ...string) []string {
		return append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
			"--snmp-agent-listen", "off", "--metrics-listen", "off"}, more...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{serve(file), "data directory " + file + " is not a directory"},
		{serve("/proc/wnms-data"), "data directory /proc/wnms-data cannot be created"},
		{[]string{"migrate", "--data", file}, "data directory " + file + " is not a directory"},
	} {
		code, _, errs := runCLI(tc.args, nil)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want it to say %q", tc.args, code, errs, tc.want)
		}
	}
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, _, errs := runCLI([]string{"migrate", "--data", dir, "--sqlite-synchronous", "sometimes"}, nil)
	if code == 0 || !strings.Contains(errs, "normal or full") {
		t.Errorf("a bad --sqlite-synchronous: exit %d, %s", code, errs)
	}
	if code, out, errs := runCLI([]string{"migrate", "--data", dir, "--sqlite-synchronous", "full"}, nil); code != 0 {
		t.Errorf("--sqlite-synchronous full: exit %d %s %s", code, out, errs)
	}
}

// The commands that administer a store never create one: a mistyped
// --data is refused, and nothing is left behind (apikey list once printed
// [] and made a new store there).
func TestCLIRefusesAMissingStore(t *testing.T) {
	for _, args := range [][]string{
		{"apikey", "list"},
		{"apikey", "create", "--login", "robot", "--role", "VIEWER"},
		{"apikey", "revoke", "--data", "DIR", "wk0123"},
		{"migrate"},
		{"backup"},
	} {
		dir := filepath.Join(t.TempDir(), "nonexist")
		if args[len(args)-1] != "wk0123" {
			args = append(args, "--data", "DIR")
		}
		for i := range args {
			if args[i] == "DIR" {
				args[i] = dir
			}
		}
		code, out, errs := runCLI(args, nil)
		if code != 1 || !strings.Contains(errs, "holds no wnms.db") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v created %s", args, dir)
		}
	}
	if testing.Short() || os.Getenv("WNMS_TEST_DATABASE_URL") == "" {
		return
	}
	// An empty PostgreSQL database is refused the same way.
	cfg := storetest.EmptyStoreConfig(t, storetest.Postgres)
	code, _, errs := runCLI([]string{"apikey", "list", "--database-url", cfg.DatabaseURL}, nil)
	if code != 1 || !strings.Contains(errs, "holds no wnms schema") {
		t.Errorf("apikey list on an empty database: exit %d, %s", code, errs)
	}
}

// A destructive command takes its target only as an argument: the
// simulator's WNMS_KEY_ID once chose the key that apikey revoke revoked.
func TestAPIKeyRevokeTakesOnlyAnArgument(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, _ := runCLI([]string{"apikey", "create", "--data", dir, "--login", "robot", "--role", "VIEWER"}, nil)
	var k struct{ KeyID string }
	if code != 0 || json.Unmarshal([]byte(out), &k) != nil {
		t.Fatalf("create: %d %s", code, out)
	}
	env := map[string]string{"WNMS_KEY_ID": k.KeyID}
	if code, _, errs := runCLI([]string{"apikey", "revoke", "--data", dir}, env); code != 2 || !strings.Contains(errs, "as the argument") {
		t.Errorf("revoke without an argument: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI([]string{"apikey", "revoke", "--data", dir, "--key-id", k.KeyID}, nil); code != 2 {
		t.Errorf("revoke --key-id: exit %d, %s", code, errs)
	}
	_, list, _ := runCLI([]string{"apikey", "list", "--data", dir}, nil)
	if !strings.Contains(list, k.KeyID) {
		t.Fatalf("the key was revoked without being named: %s", list)
	}
	if code, out, errs := runCLI([]string{"apikey", "revoke", "--data", dir, k.KeyID}, env); code != 0 || !strings.Contains(out, "revoked "+k.KeyID) {
		t.Errorf("revoke KEYID: exit %d %s %s", code, out, errs)
	}
}

// The bootstrap key file is never overwritten: a second store on the same
// data directory writes its key beside the first.
func TestBootstrapKeyNeverOverwritten(t *testing.T) {
	dir := t.TempDir()
	first := []byte("{\"keyId\":\"an earlier store's key\"}\n")
	if err := os.WriteFile(filepath.Join(dir, "bootstrap-key.json"), first, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stdout, _, stop := bootServe(t, map[string]string{"WNMS_DATA": dir})
	stop()
	if b, _ := os.ReadFile(filepath.Join(dir, "bootstrap-key.json")); !bytes.Equal(b, first) {
		t.Errorf("bootstrap-key.json was overwritten: %s", b)
	}
	second := filepath.Join(dir, "bootstrap-key-2.json")
	b, err := os.ReadFile(second)
	if err != nil || !strings.Contains(string(b), "keyValue") {
		t.Fatalf("the new key is not in %s: %v %s", second, err, b)
	}
	if !strings.Contains(stdout.String(), second) {
		t.Errorf("the output does not say where the key went: %s", stdout.String())
	}
}

// Every flag of serve is checked before anything happens: a bad value
// exits 2 and creates nothing (--retention 1m once made both databases and
// the admin, printed a key, then exited).
func TestServeBadFlagsChangeNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"retention", []string{"--retention", "1m"}, nil, "--retention"},
		{"tls", []string{"--tls", "on"}, nil, "--tls"},
		{"sqlite-synchronous", []string{"--sqlite-synchronous", "off"}, nil, "--sqlite-synchronous"},
		{"max-conns", []string{"--max-conns", "-5"}, nil, "--max-conns"},
		{"max-conns-per-addr", []string{"--max-conns-per-addr", "-1"}, nil, "--max-conns-per-addr"},
		{"server-id", []string{"--server-id", "0"}, nil, "--server-id"},
		{"shutdown-timeout", []string{"--shutdown-timeout", "-1s"}, nil, "--shutdown-timeout"},
		{"ap-timeout", []string{"--ap-timeout", "10ms"}, nil, "--ap-timeout"},
		{"baseline-k", []string{"--baseline-k", "0"}, nil, "--baseline-k"},
		// Before, NaN passed the range check (every comparison with it is
		// false) and the connectivity baseline then answered 500.
		{"baseline-k NaN", []string{"--baseline-k", "NaN"}, nil, "--baseline-k NaN: expected a finite number"},
		{"baseline-k nan", []string{"--baseline-k", "nan"}, nil, "--baseline-k"},
		{"baseline-k +Inf", []string{"--baseline-k", "+Inf"}, nil, "--baseline-k +Inf: expected a finite number"},
		{"baseline-k -infinity", []string{"--baseline-k=-infinity"}, nil, "--baseline-k"},
		{"baseline-k above 10", []string{"--baseline-k", "10.5"}, nil, "--baseline-k 10.5: must be above 0 and at most 10"},
		{"baseline-k NaN from the environment", nil, map[string]string{"WNMS_BASELINE_K": "NaN"}, "WNMS_BASELINE_K"},
		{"baseline-min-samples", []string{"--baseline-min-samples", "0"}, nil, "--baseline-min-samples"},
		{"anomaly-min-clients", []string{"--anomaly-min-clients", "0"}, nil, "--anomaly-min-clients 0: must be at least 1"},
		{"anomaly-min-sigma negative", []string{"--anomaly-min-sigma", "-1"}, nil, "--anomaly-min-sigma -1: must be 0 to 100"},
		{"anomaly-min-sigma NaN", []string{"--anomaly-min-sigma", "NaN"}, nil, "--anomaly-min-sigma NaN: expected a finite number"},
		{"anomaly-min-sigma +Inf", nil, map[string]string{"WNMS_ANOMALY_MIN_SIGMA": "+Inf"}, "WNMS_ANOMALY_MIN_SIGMA"},
		{"anomaly-alpha 0", []string{"--anomaly-alpha", "0"}, nil, "--anomaly-alpha 0: must be above 0 and at most 1"},
		{"anomaly-alpha above 1", []string{"--anomaly-alpha", "1.5"}, nil, "--anomaly-alpha 1.5: must be above 0 and at most 1"},
		{"anomaly-alpha NaN", []string{"--anomaly-alpha=nan"}, nil, "--anomaly-alpha"},
		{"ap-anomaly-min-paired 1", []string{"--ap-anomaly-min-paired", "1"}, nil, "--ap-anomaly-min-paired 1: must be at least 2"},
		{"ap-anomaly-min-rssi-drop negative", []string{"--ap-anomaly-min-rssi-drop", "-3"}, nil, "--ap-anomaly-min-rssi-drop -3: must be 0 to 100 (dB)"},
		{"ap-anomaly-min-retry-rise NaN", []string{"--ap-anomaly-min-retry-rise=nan"}, nil, "--ap-anomaly-min-retry-rise"},
		{"ap-anomaly-min-retry-rise env", nil, map[string]string{"WNMS_AP_ANOMALY_MIN_RETRY_RISE": "101"}, "must be 0 to 100 (percentage points)"},
		{"allowed-hosts with a scheme", []string{"--allowed-hosts", "https://wnms.example.com"}, nil, "--allowed-hosts"},
		{"sqlite-cache-mib", []string{"--sqlite-cache-mib", "-1"}, nil, "--sqlite-cache-mib"},
		{"database-max-conns 0", []string{"--database-max-conns", "0"}, nil, "--database-max-conns 0: must be 2 to 1000"},
		{"database-max-conns 1", []string{"--database-max-conns", "1"}, nil, "--database-max-conns 1: must be 2 to 1000"},
		{"database-max-conns too many", []string{"--database-max-conns", "1001"}, nil, "--database-max-conns 1001: must be 2 to 1000"},
		{"database-max-conns not a number", []string{"--database-max-conns", "lots"}, nil, "--database-max-conns"},
		{"database-max-conns from the environment", nil, map[string]string{"WNMS_DATABASE_MAX_CONNS": "-3"}, "WNMS_DATABASE_MAX_CONNS -3"},
		{"radius-accept-hold", []string{"--radius-accept-hold", "500ms"}, nil, "--radius-accept-hold"},
		{"radius-accept-hold too long", []string{"--radius-accept-hold", "1h"}, nil, "--radius-accept-hold"},
		{"radius-store-wait", []string{"--radius-store-wait", "1ms"}, nil, "--radius-store-wait"},
		{"radius-store-wait too long", []string{"--radius-store-wait", "1m"}, nil, "--radius-store-wait"},
		{"tls-cert alone", []string{"--tls-cert", "x.pem"}, nil, "--tls-key"},
		{"bootstrap key id alone", []string{"--bootstrap-key-id", "k"}, nil, "--bootstrap-key-value"},
		{"database-url", []string{"--database-url", "mysql://x"}, nil, "--database-url"},
		{"log-level", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"retention from the environment", nil, map[string]string{"WNMS_RETENTION": "1m"}, "WNMS_RETENTION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			args := append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
				"--snmp-agent-listen", "off", "--metrics-listen", "off"}, tc.args...)
			code, out, errs := runCLI(args, tc.env)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, errs, tc.want)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("created %s", dir)
			}
		})
	}
}

// A second wnms serve on the same SQLite data directory refuses to start
// and says why, instead of sharing the store without a word.
func TestServeLocksTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	bootServe(t, map[string]string{"WNMS_DATA": dir})
	code, _, errs := runCLI([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
		"--snmp-agent-listen", "off", "--metrics-listen", "off"}, nil)
	if code != 1 || !strings.Contains(errs, "is in use by another wnms serve (pid ") {
		t.Errorf("second serve: exit %d, %s", code, errs)
	}
	// The CLI still works beside the running server.
	if code, out, errs := runCLI([]string{"apikey", "list", "--data", dir}, nil); code != 0 {
		t.Errorf("apikey list beside the server: %d %s %s", code, out, errs)
	}
}

// Each store's bootstrap key has a predictable name, so a walk-through
// that ran on SQLite and then on PostgreSQL in one data directory reads
// the right file (the PostgreSQL key once became bootstrap-key-2.json).
func TestBootstrapKeyNamedAfterItsStore(t *testing.T) {
	for url, want := range map[string]string{
		"": "bootstrap-key",
		"postgres://wnms@127.0.0.1:5432/wnms?sslmode=disable": "bootstrap-key-postgres-wnms",
		"postgresql://u:p@db.example/net ops":                 "bootstrap-key-postgres-net_ops",
		"postgres://u@host":                                   "bootstrap-key-postgres-postgres",
		"postgres://u@host/../../etc":                         "bootstrap-key-postgres-______etc",
	} {
		if got := bootstrapKeyBase(url); got != want {
			t.Errorf("bootstrapKeyBase(%q) = %q, want %q", url, got, want)
		}
	}
}

// The command line's key changes are audited, via "cli", by the user that
// ran them, and never with the key's value.
func TestAPIKeyCommandsAudited(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	env := map[string]string{"USER": "opsperson"}
	code, out, _ := runCLI([]string{"apikey", "create", "--data", dir, "--login", "robot", "--role", "VIEWER"}, env)
	var k struct{ KeyID, KeyValue string }
	if code != 0 || json.Unmarshal([]byte(out), &k) != nil {
		t.Fatalf("create: %d %s", code, out)
	}
	if code, out, errs := runCLI([]string{"apikey", "revoke", "--data", dir, k.KeyID}, env); code != 0 {
		t.Fatalf("revoke: %d %s %s", code, out, errs)
	}
	st, err = store.Open(context.Background(), store.Config{DataDir: dir, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, _, err := st.AuditRecords(context.Background(), wnms.AuditQuery{CustomerID: wnms.OnPremCustomer, From: -1, To: -1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the revoke, the key's creation, and the creation of its
	// user, each naming its resource and listing its change.
	var got []string
	for _, r := range recs {
		if r.Actor.Via != "cli" || r.Actor.LoginID != "opsperson" || r.Method != "CLI" {
			t.Errorf("record %+v", r)
		}
		if strings.Contains(fmt.Sprintf("%+v", r), k.KeyValue) {
			t.Errorf("a record holds the key's value: %+v", r)
		}
		login := ""
		for _, c := range r.Changes {
			if c.Field == "loginId" {
				login = string(c.Before) + ">" + string(c.After)
			}
		}
		got = append(got, r.Path+" | "+r.ResourceType+" | "+r.ResourceName+" | "+login)
	}
	want := []string{
		"wnms apikey revoke " + k.KeyID + ` | apikeys | robot key ` + k.KeyID + ` | "robot">null`,
		"wnms apikey create --login robot | apikeys | robot key " + k.KeyID + ` | null>"robot"`,
		`wnms apikey create --login robot | users | robot | null>"robot"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audited commands (-want +got):\n%s", diff)
	}
}
