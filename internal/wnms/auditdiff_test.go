package wnms

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	long := strings.Repeat("x", 300)
	many := func(n int, v string) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("f%03d", i)] = v
		}
		return m
	}
	cases := []struct {
		name          string
		before, after any
		want          string // the changes as JSON
		omitted       int
	}{
		{"unchanged", map[string]any{"a": 1}, map[string]any{"a": 1}, `[]`, 0},
		{"created", nil, map[string]any{"a": 1, "b": map[string]any{"c": "d"}},
			`[{"field":"a","before":null,"after":1},{"field":"b.c","before":null,"after":"d"}]`, 0},
		{"deleted", map[string]any{"a": 1}, nil, `[{"field":"a","before":1,"after":null}]`, 0},
		{"secret changed", map[string]any{"secret": "old-one", "x": 1}, map[string]any{"secret": "new-one", "x": 1},
			`[{"field":"secret","before":"***","after":"***"}]`, 0},
		{"secret unchanged", map[string]any{"secret": "same"}, map[string]any{"secret": "same"}, `[]`, 0},
		{"named elements", map[string]any{"sources": []any{map[string]any{"name": "ap", "cidr": "10.0.0.0/8", "radiusSecret": "s1"}}},
			map[string]any{"sources": []any{map[string]any{"name": "ap", "cidr": "10.1.0.0/16", "radiusSecret": "s2"}}},
			`[{"field":"sources[ap].cidr","before":"10.0.0.0/8","after":"10.1.0.0/16"},{"field":"sources[ap].radiusSecret","before":"***","after":"***"}]`, 0},
		{"indexed elements", map[string]any{"servers": []any{map[string]any{"port": 1}}}, map[string]any{"servers": []any{map[string]any{"port": 2}}},
			`[{"field":"servers[0].port","before":1,"after":2}]`, 0},
		{"list of values", map[string]any{"ssids": []any{"a"}}, map[string]any{"ssids": []any{"a", "b"}},
			`[{"field":"ssids","before":["a"],"after":["a","b"]}]`, 0},
		// A list of more than 16 objects is one value, its secrets masked
		// before it is shown (and hashed when long).
		{"long list with secrets", nil, map[string]any{"l": func() []any {
			var l []any
			for range 17 {
				l = append(l, map[string]any{"password": "p"})
			}
			return l
		}()}, `[{"field":"l","before":null,"after":{"bytes":324,"sha256":"` + sha(`[`+strings.TrimSuffix(strings.Repeat(`{"password":"***"},`, 17), ",")+`]`) + `"}}]`, 0},
		{"long value", map[string]any{"d": "short"}, map[string]any{"d": long},
			`[{"field":"d","before":"short","after":{"bytes":302,"sha256":"` + sha(`"`+long+`"`) + `"}}]`, 0},
		{"bounded", many(60, "a"), many(60, "b"), "", 0},
		{"too many", nil, map[string]any{"a": many(40, "x"), "b": many(40, "y")}, "", 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, omitted := Diff(c.before, c.after)
			if omitted != c.omitted {
				t.Errorf("omitted %d, want %d", omitted, c.omitted)
			}
			if len(got) > MaxAuditChanges {
				t.Errorf("%d changes, more than %d", len(got), MaxAuditChanges)
			}
			if c.want == "" {
				return
			}
			b, _ := json.Marshal(got)
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}

// sha is the hex SHA-256 of s.
func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Every field of an audited domain type whose name looks secret is either
// masked in audit records (AuditSecretFields) or known not to be a secret:
// a new secret field cannot reach the audit log unmasked unnoticed.
func TestAuditSecretFieldsCovered(t *testing.T) {
	notSecret := map[string]bool{"authenticationProtocol": true, "authenticationType": true, "defaultPassword": true,
		"passthroughCoefficient": true, "passwdSettings": true, "passwordChangeEnforced": true, "passwordExpires": true,
		"passwordExpiryDateTime": true, "passwordExpiryDaysInterval": true, "passwordExpiryWarningDays": true,
		"requireMessageAuthenticator": true}
	for _, v := range []any{User{}, Template{}, SNMPPolicy{}, HotspotSSIDPolicy{}, DataSources{}, Webhook{}, Location{},
		FloorLayout{}, ZoneConfig{}, APIKey{}, AP{}, CustomField{}} {
		walkFields(reflect.TypeOf(v), map[reflect.Type]bool{}, func(name string) {
			if IsSecretName(name) && !auditSecret[name] && !notSecret[name] {
				t.Errorf("%T has the field %q, which looks secret: list it in AuditSecretFields (or as not secret here)", v, name)
			}
		})
	}
}

func walkFields(typ reflect.Type, seen map[reflect.Type]bool, f func(string)) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map || typ.Kind() == reflect.Array {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || seen[typ] {
		return
	}
	seen[typ] = true
	for i := range typ.NumField() {
		sf := typ.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f(name)
		walkFields(sf.Type, seen, f)
	}
}
