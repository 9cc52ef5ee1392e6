package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"serve", "--help"}, []string{"usage: wnms serve", "--listen", "WNMS_LISTEN", "--max-conns-per-addr", "--sqlite-synchronous"}, []string{"--key-id"}},
		{[]string{"serve", "-h"}, []string{"usage: wnms serve"}, nil},
		{[]string{"apikey", "--help"}, []string{"create", "list", "revoke"}, nil},
		{[]string{"apikey", "create", "--help"}, []string{"--login", "--role", "--customer", "--data"}, []string{"--key-id"}},
		{[]string{"apikey", "list", "-h"}, []string{"usage: wnms apikey list", "--database-url"}, []string{"--login", "--key-id"}},
		{[]string{"apikey", "revoke", "--help"}, []string{"usage: wnms apikey revoke [flags] KEYID", "--key-id"}, []string{"--login"}},
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
	for _, tc := range []struct{ dir, want string }{
		{file, "data directory " + file + " is not a directory"},
		{"/proc/wnms-data", "data directory /proc/wnms-data cannot be created"},
	} {
		code, _, errs := runCLI([]string{"migrate", "--data", tc.dir}, nil)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("--data %s: exit %d, stderr %q; want it to say %q", tc.dir, code, errs, tc.want)
		}
	}
	code, _, errs := runCLI([]string{"migrate", "--data", t.TempDir(), "--sqlite-synchronous", "sometimes"}, nil)
	if code == 0 || !strings.Contains(errs, "normal or full") {
		t.Errorf("a bad --sqlite-synchronous: exit %d, %s", code, errs)
	}
	if code, out, errs := runCLI([]string{"migrate", "--data", t.TempDir(), "--sqlite-synchronous", "full"}, nil); code != 0 {
		t.Errorf("--sqlite-synchronous full: exit %d %s %s", code, out, errs)
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
