package wnms

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// AuditChange is one field a configuration change changed, with its value
// before and after as JSON (null: the field did not exist). A secret field
// shows "***" on both sides, whatever its value.
type AuditChange struct {
	Field  string          `json:"field"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// Bounds of a record's changes (decisions §23): at most MaxAuditChanges
// changes (the rest are counted in ChangesOmitted), and a value whose JSON
// is longer than MaxAuditValue bytes is shown as {"bytes": n, "sha256":
// hex} of its JSON, secrets masked first. A floor plan's image or SPM file
// is never diffed: its record carries the file's size and hash.
const (
	MaxAuditChanges = 64
	MaxAuditValue   = 256
)

// Limits of the walk into a value: an object of more than auditMaxKeys
// members, an array of more than auditMaxItems objects, or anything deeper
// than auditMaxDepth is compared and shown as one value (e.g. a layout's
// 10,000 obstacles are one field, "obstaclesInfo.obstacles").
const (
	auditMaxKeys  = 64
	auditMaxItems = 16
	auditMaxDepth = 6
)

// AuditSecretFields are the JSON names of the secret fields of every
// audited resource: users' and profiles' passwords and passphrases, the SNMP
// policy's community and SNMPv3 passwords (agent and trap receivers),
// webhooks' secrets, data sources' RADIUS secrets (sources and upstream
// servers). Diff shows them as "***" wherever they occur in a value, so a
// field added to a resource with one of these names is masked; a test
// (TestAuditSecretFieldsCovered) fails when a domain type grows a field
// whose name looks secret (IsSecretName) and that is not listed here or
// known not to be one.
var AuditSecretFields = []string{
	"password", "passphrase", // users (their password hash), connection test profiles
	"communityString", "authenticationPassword", "privacyPassword", // SNMP policy
	"secret",       // webhooks, RADIUS upstream servers of the data sources
	"radiusSecret", // data sources
	"keyValue",     // API keys (never stored, listed for safety)
}

var auditSecret = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range AuditSecretFields {
		m[f] = true
	}
	return m
}()

// masked is how a secret's value is shown.
var masked = json.RawMessage(`"***"`)

// Diff lists the fields that differ between before and after, two values
// of one resource (domain types, or maps of field names to values) as they
// encode to JSON: nested objects are walked ("snmpSettings.getEnabled"),
// arrays of objects by element ("sources[ap-1].cidr" when every element
// has a distinct "name", else "servers[0].port"), other arrays compared
// whole. before nil is a creation (every before null), after nil a
// deletion. Secret fields (AuditSecretFields) show "***" on both sides,
// values longer than MaxAuditValue their size and hash; changes are
// sorted by field, at most MaxAuditChanges, omitted counting the rest.
//
// Either value may be a DiffSide made beforehand (Flatten): a change made
// in a transaction that others wait for flattens its new value before the
// transaction begins, leaving only the value it replaces to flatten
// inside.
func Diff(before, after any) (changes []AuditChange, omitted int) {
	b, a := Flatten(before), Flatten(after)
	fields := make([]string, 0, len(a)+len(b))
	for f, av := range a {
		if bv, ok := b[f]; !ok || !reflect.DeepEqual(av, bv) {
			fields = append(fields, f)
		}
	}
	for f := range b {
		if _, ok := a[f]; !ok {
			fields = append(fields, f)
		}
	}
	slices.Sort(fields)
	if len(fields) > MaxAuditChanges {
		omitted = len(fields) - MaxAuditChanges
		fields = fields[:MaxAuditChanges]
	}
	changes = make([]AuditChange, 0, len(fields))
	for _, f := range fields {
		bv, inB := b[f]
		av, inA := a[f]
		if bv == nil && av == nil {
			continue // null where the other side has no such field: no change to show
		}
		changes = append(changes, AuditChange{Field: f, Before: showValue(f, bv, inB), After: showValue(f, av, inA)})
	}
	return changes, omitted
}

// DiffSide is one side of a Diff: a value's leaves by field path.
type DiffSide map[string]any

// Flatten is v as Diff compares it (v a DiffSide already is returned as
// it is).
func Flatten(v any) DiffSide {
	if d, ok := v.(DiffSide); ok {
		return d
	}
	out := DiffSide{}
	flatten("", decodeTree(v), 0, out)
	return out
}

// decodeTree is v as generic JSON (maps, slices, json.Number, strings,
// bools, nil); nil for nil, a nil pointer, or what encoding/json refuses.
func decodeTree(v any) any {
	if v == nil {
		return nil
	}
	var t any
	ok := false
	if raw, isRaw := v.(json.RawMessage); isRaw {
		t, ok = decodeRaw(raw)
	} else {
		t, ok = treeOf(reflect.ValueOf(v), 0)
	}
	if !ok {
		return nil
	}
	return t
}

// decodeRaw is a JSON document as generic JSON, numbers as json.Number.
func decodeRaw(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var t any
	if dec.Decode(&t) != nil {
		return nil, false
	}
	return t, true
}

// flatten puts the leaves of t into out by field path.
func flatten(prefix string, t any, depth int, out map[string]any) {
	if t == nil && prefix == "" {
		return // no value at all (a creation's before)
	}
	switch v := t.(type) {
	case map[string]any:
		if (len(v) > 0 || prefix == "") && len(v) <= auditMaxKeys && depth < auditMaxDepth {
			for k, x := range v {
				flatten(join(prefix, k), x, depth+1, out)
			}
			return
		}
	case []any:
		if len(v) > 0 && len(v) <= auditMaxItems && depth < auditMaxDepth && allObjects(v) {
			names := elementNames(v)
			for i, x := range v {
				key := strconv.Itoa(i)
				if names != nil {
					key = names[i]
				}
				flatten(prefix+"["+key+"]", x, depth+1, out)
			}
			return
		}
	}
	if prefix == "" {
		prefix = "value"
	}
	out[prefix] = t
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func allObjects(v []any) bool {
	for _, x := range v {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// elementNames are the distinct non-empty "name"s of objects v, or nil.
func elementNames(v []any) []string {
	names := make([]string, len(v))
	seen := map[string]bool{}
	for i, x := range v {
		n, _ := x.(map[string]any)["name"].(string)
		if n == "" || seen[n] || strings.ContainsAny(n, "[]") {
			return nil
		}
		seen[n], names[i] = true, n
	}
	return names
}

// leafName is the last field name of a path ("servers[0].secret" ->
// "secret", "kinds[1]" -> "kinds").
func leafName(path string) string {
	for strings.HasSuffix(path, "]") {
		i := strings.LastIndex(path, "[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	if i := strings.LastIndex(path, "."); i >= 0 {
		path = path[i+1:]
	}
	return path
}

// showValue is how a value at path is shown: null when absent, "***" for a
// secret, else its JSON with the secrets inside masked, bounded.
func showValue(path string, v any, present bool) json.RawMessage {
	if !present {
		return nil
	}
	if auditSecret[leafName(path)] {
		return masked
	}
	b, err := json.Marshal(maskTree(v))
	if err != nil {
		return nil
	}
	if len(b) > MaxAuditValue {
		sum := sha256.Sum256(b)
		b, _ = json.Marshal(struct {
			Bytes  int    `json:"bytes"`
			SHA256 string `json:"sha256"`
		}{len(b), hex.EncodeToString(sum[:])})
	}
	return b
}

// maskTree is t with the value of every secret field inside it "***".
func maskTree(t any) any {
	switch v := t.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if auditSecret[k] {
				out[k] = "***"
			} else {
				out[k] = maskTree(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = maskTree(x)
		}
		return out
	}
	return t
}
