package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/cluster"
	"github.com/wnms/wnms/internal/console"
	"github.com/wnms/wnms/openapi"
)

// Tests that keep the documentation true to the code: every flag and
// field the docs name exists, every flag the binary has is documented,
// and the console's size is the one the README states.

// commandsOfUsage are the commands wnms's usage lists ("serve", "apikey
// create", ...): the first words of each command line, up to its flags,
// arguments or description.
func commandsOfUsage(t *testing.T) []string {
	t.Helper()
	var cmds []string
	for _, line := range strings.Split(usage, "\n") {
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue // not a command line, or a description's continuation
		}
		head, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		var words []string
		for _, w := range strings.Fields(head) {
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.ToLower(w) != w {
				break
			}
			words = append(words, w)
		}
		cmds = append(cmds, strings.Join(words, " "))
	}
	if len(cmds) < 7 {
		t.Fatalf("read only %d commands from the usage: %q", len(cmds), cmds)
	}
	return cmds
}

var helpFlag = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)  \((WNMS_[A-Z0-9_]+)\)$`)

// flagsOf runs `wnms <cmd> --help` and returns its flags with their
// environment twins, as the binary itself lists them.
func flagsOf(t *testing.T, cmd string) map[string]string {
	t.Helper()
	var out strings.Builder
	err := run(context.Background(), append(strings.Fields(cmd), "--help"), func(string) string { return "" }, &out, io.Discard)
	if err != nil && err != errHelp {
		t.Fatalf("wnms %s --help: %v", cmd, err)
	}
	if !strings.HasPrefix(out.String(), "usage: wnms "+cmd) {
		t.Fatalf("wnms %s --help printed:\n%s", cmd, out.String())
	}
	flags := map[string]string{}
	for _, m := range helpFlag.FindAllStringSubmatch(out.String(), -1) {
		flags[m[1]] = m[2]
	}
	return flags
}

var (
	docCommand = regexp.MustCompile("`wnms ([a-z]+(?: [a-z]+)?)`")
	docFlagRow = regexp.MustCompile("^\\| `--([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\|")
)

// docFlags reads docs/configuration.md: for each command named in a
// section's heading, the flags of the section's table rows with the
// environment name each row gives.
func docFlags(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]map[string]string{}
	var cmds []string
	heading := ""
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			heading, cmds = line, nil
			for _, m := range docCommand.FindAllStringSubmatch(line, -1) {
				cmds = append(cmds, m[1])
			}
			continue
		}
		if !strings.HasPrefix(line, "| `-") {
			continue
		}
		m := docFlagRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("docs/configuration.md: a flag row not in the form | `--flag` | `WNMS_...` | ...:\n%s", line)
			continue
		}
		if len(cmds) == 0 {
			t.Errorf("docs/configuration.md: --%s is in a section whose heading names no command (%q)", m[1], heading)
		}
		for _, c := range cmds {
			if docs[c] == nil {
				docs[c] = map[string]string{}
			}
			if _, twice := docs[c][m[1]]; twice {
				t.Errorf("docs/configuration.md: --%s is documented twice for wnms %s", m[1], c)
			}
			docs[c][m[1]] = m[2]
		}
	}
	return docs
}

// Every flag of every wnms command has a row in docs/configuration.md
// under a heading that names the command, with its environment twin; and
// every row names a flag the command has. A flag added without its row, a
// row left behind by a removed flag, and a command the reference forgets
// all fail here.
func TestDocsConfiguration(t *testing.T) {
	docs := docFlags(t)
	checked := 0
	known := map[string]bool{}
	for _, cmd := range commandsOfUsage(t) {
		known[cmd] = true
		flags := flagsOf(t, cmd)
		documented := docs[cmd]
		for name, env := range flags {
			checked++
			switch got, ok := documented[name]; {
			case !ok:
				t.Errorf("wnms %s --%s (%s) is not in docs/configuration.md: add its row under a heading that names `wnms %s`", cmd, name, env, cmd)
			case got != env:
				t.Errorf("docs/configuration.md: wnms %s --%s has environment %s, the binary %s", cmd, name, got, env)
			}
		}
		for name := range documented {
			if _, ok := flags[name]; !ok {
				t.Errorf("docs/configuration.md documents --%s for wnms %s, which has no such flag", name, cmd)
			}
		}
	}
	for cmd := range docs {
		if !known[cmd] {
			t.Errorf("docs/configuration.md names `wnms %s`, which is not a command", cmd)
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d flags", checked)
	}
}

// openAPINames are the names the OpenAPI document defines: the
// properties of its schemas, the names of its parameters, and its enum
// values; and, apart, the properties that are maps (an object of
// additionalProperties only), whose keys are data, not names.
func openAPINames(t *testing.T) (names, maps map[string]bool) {
	t.Helper()
	b, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	names, maps = map[string]bool{}, map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "properties":
					if props, ok := e.(map[string]any); ok {
						for p, schema := range props {
							names[p] = true
							if schema, ok := schema.(map[string]any); ok && schema["properties"] == nil {
								if _, ok := schema["additionalProperties"].(map[string]any); ok {
									maps[p] = true
								}
							}
						}
					}
				case "parameters":
					if params, ok := e.([]any); ok {
						for _, p := range params {
							if p, ok := p.(map[string]any); ok {
								if n, ok := p["name"].(string); ok {
									names[n] = true
								}
							}
						}
					}
				case "enum":
					if values, ok := e.([]any); ok {
						for _, v := range values {
							if s, ok := v.(string); ok {
								names[s] = true
							}
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return names, maps
}

// jsonNames adds the JSON names of the struct type v's fields (and of
// the structs it holds) to names.
func jsonNames(names map[string]bool, typ reflect.Type) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
		jsonNames(names, f.Type)
	}
}

var (
	mibObject = regexp.MustCompile(`(?m)^([a-z][A-Za-z0-9]*)\s+(?:OBJECT-TYPE|NOTIFICATION-TYPE|OBJECT IDENTIFIER|OBJECT-IDENTITY|MODULE-IDENTITY|OBJECT-GROUP|NOTIFICATION-GROUP|MODULE-COMPLIANCE)`)
	// A field's name as the docs write it: camelCase, in backticks.
	camelCase = regexp.MustCompile(`^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$`)
	inTicks   = regexp.MustCompile("`([^`\n]+)`")
	codeBlock = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```")
)

// standardSNMP are names of standard MIB objects and SNMP protocol terms
// that docs/api.md §20 names (RFC 1213, 2863, 2790, 3411–3418): not fields
// of the HTTP API, and not in mibs/, which holds WNMS-MIB and the modules
// it imports.
var standardSNMP = map[string]bool{
	"sysDescr": true, "sysObjectID": true, "sysUpTime": true, "sysContact": true, "sysName": true, "sysLocation": true,
	"ifNumber": true, "ifTable": true, "ifXTable": true, "ifName": true, "ifHCInOctets": true, "ifHCOutOctets": true, "ifHighSpeed": true,
	"hrSystemUptime": true, "hrMemorySize": true, "hrStorageTable": true, "hrProcessorLoad": true,
	"usmStatsNotInTimeWindows": true, "usmStatsUnknownEngineIDs": true, "usmStatsUnsupportedSecLevels": true,
	"snmpTrapOID": true, "coldStart": true, "msgMaxSize": true, "noSuchName": true, "notWritable": true, "tooBig": true,
}

// The field names docs/api.md and docs/datasources.md give exist: every
// camelCase name in backticks (a field, a parameter, an enum value; a
// dotted path is checked name by name) and every key of their JSON
// examples is a property, parameter or enum value of the OpenAPI
// document (a map's keys excepted), a key of the cluster file (which is not an HTTP body), an
// object of mibs/, or a standard SNMP name. A field renamed or removed in
// the OpenAPI document, or misspelt in the docs, fails here. (Names of one
// lower-case word, such as `url`, cannot be told from words of the prose
// and are not checked.)
func TestDocsAPIFields(t *testing.T) {
	names, maps := openAPINames(t)
	if len(names) < 300 || len(maps) == 0 {
		t.Fatalf("only %d names in the OpenAPI document", len(names))
	}
	jsonNames(names, reflect.TypeFor[cluster.Config]())
	mibs, err := filepath.Glob("../../mibs/*.txt")
	if err != nil || len(mibs) == 0 {
		t.Fatalf("no MIB files: %v", err)
	}
	for _, f := range mibs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mibObject.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
	}
	for n := range standardSNMP {
		names[n] = true
	}
	for _, doc := range []string{"docs/api.md", "docs/datasources.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		checked := 0
		missing := map[string]bool{}
		check := func(name string) {
			checked++
			if !names[name] {
				missing[name] = true
			}
		}
		// The JSON examples, key by key.
		for _, m := range codeBlock.FindAllStringSubmatch(text, -1) {
			var v any
			if m[1] != "json" || json.Unmarshal([]byte(m[2]), &v) != nil {
				continue
			}
			var keys func(v any)
			keys = func(v any) {
				switch x := v.(type) {
				case map[string]any:
					for k, e := range x {
						check(k)
						if !maps[k] { // a map's keys are data
							keys(e)
						}
					}
				case []any:
					for _, e := range x {
						keys(e)
					}
				}
			}
			keys(v)
		}
		// The prose, outside code blocks.
		for _, m := range inTicks.FindAllStringSubmatch(codeBlock.ReplaceAllString(text, ""), -1) {
			for _, part := range strings.FieldsFunc(m[1], func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
				if camelCase.MatchString(part) {
					check(part)
				}
			}
		}
		if checked < 20 {
			t.Errorf("%s: checked only %d names", doc, checked)
		}
		if len(missing) > 0 {
			list := make([]string, 0, len(missing))
			for n := range missing {
				list = append(list, n)
			}
			sort.Strings(list)
			t.Errorf("%s names fields the OpenAPI document does not have: %s", doc, strings.Join(list, ", "))
		}
	}
}

var consoleSize = regexp.MustCompile(`about (\d+) KB of script and style sheet, (\d+) KB gzipped as sent`)

// The README states the console's size as the binary embeds it: its
// script and style sheets, plain and gzipped as served, in KB (1,000
// bytes), each within 5 % (the README rounds).
func TestREADMEConsoleSize(t *testing.T) {
	plain, gzipped := console.New().Size()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := consoleSize.FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatalf("the README does not state the console's size as %q", consoleSize)
	}
	for i, measured := range []int{plain, gzipped} {
		stated, _ := strconv.Atoi(m[i+1])
		if math.Abs(float64(stated*1000-measured)) > 0.05*float64(measured) {
			t.Errorf("the README says %s KB; the console's script and style sheets are %d bytes (%d gzipped): say about %d KB and %d KB gzipped",
				m[i+1], plain, gzipped, (plain+500)/1000, (gzipped+500)/1000)
		}
	}
}

// The README stays short enough to read through (issue 35 asked for about
// 400 lines; the rest of the documentation is in docs/), and leads with
// what wnms implements and what it does not do.
func TestREADMELeads(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if n := strings.Count(s, "\n"); n > 450 {
		t.Errorf("the README has %d lines; keep it under 450 and move reference material to docs/", n)
	}
	first := s
	if i := strings.Index(s, "\n## "); i >= 0 {
		first = s[:i]
	}
	for _, want := range []string{"Wireless Manager", "CV-CUE", "Mojo Networks", "does not"} {
		if !strings.Contains(strings.Join(strings.Fields(first), " "), want) {
			t.Errorf("the README's opening does not say %q", want)
		}
	}
	// Every document the README links to exists.
	for _, m := range regexp.MustCompile(`\]\((docs/[^)#]+|LICENSE|NOTICE)(?:#[^)]*)?\)`).FindAllStringSubmatch(s, -1) {
		if _, err := os.Stat(filepath.Join("..", "..", m[1])); err != nil {
			t.Errorf("the README links to %s: %v", m[1], err)
		}
	}
}
