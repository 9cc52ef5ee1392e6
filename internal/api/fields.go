package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// The selective fetch of api.md §7: a call that takes `fields`
// answers with only the named top-level fields of each object, plus
// `type`. Any resource can use it:
//
//	var templateFields = newFieldSet(jsonFieldNames(wnms.Template{}))
//	...
//	fields, err := parseFields(r, templateFields)
//	...
//	body, err := selectFields(v, fields) // or selectEach(items, fields)

// fieldSet is the fields a call's answer may be cut to, with their
// lower-case spellings looked up once, when the set is made: a request
// that names no fields (almost every one) costs no allocation.
type fieldSet struct {
	known []string
	canon map[string]string // lower case -> the spelling of known
}

// newFieldSet makes the set of known field names.
func newFieldSet(known []string) *fieldSet {
	canon := make(map[string]string, len(known))
	for _, k := range known {
		canon[strings.ToLower(k)] = k
	}
	return &fieldSet{known: known, canon: canon}
}

// parseFields reads the fields query parameter in any of its spellings —
// fields=a,b, repeated fields=a&fields=b, and fields=[a,b] (names may be
// quoted) — and returns the names in the spelling of fs, in the order
// given, without repeats. It returns nil when the parameter is absent or
// names nothing: every field is wanted. A name that is not in fs
// (compared case-insensitively) is 400
// SELECTIVE_FETCH_OR_UPDATE_NOT_SUPPORTED_FOR_FIELD naming it.
func parseFields(r *http.Request, fs *fieldSet) ([]string, error) {
	if r.URL.RawQuery == "" {
		return nil, nil // nothing to parse: every field
	}
	var out []string
	var seen map[string]bool
	for _, v := range r.URL.Query()["fields"] {
		v = strings.TrimSpace(v)
		v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
		for name := range strings.SplitSeq(v, ",") {
			name = strings.Trim(strings.TrimSpace(name), `"'`)
			if name == "" {
				continue
			}
			k, ok := fs.canon[strings.ToLower(name)]
			if !ok {
				return nil, &wnms.Error{Code: wnms.SelectiveFetch, MoreInfo: name,
					Message: fmt.Sprintf("field %q cannot be selected; known fields: %s", name, strings.Join(fs.known, ", "))}
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// jsonFieldNames lists the JSON names of the top-level fields of a struct
// value (or pointer to one), as encoding/json writes them: fields tagged
// "-" and unexported fields are left out; embedded structs contribute
// their own fields.
func jsonFieldNames(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFieldNames(reflect.New(ft).Interface())...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// selectFields returns the JSON of v, an object, holding only the named
// top-level fields plus "type" (when v has it), in v's own order. nil
// fields selects every field.
func selectFields(v any, fields []string) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil || fields == nil {
		return b, err
	}
	want := make(map[string]bool, len(fields)+1)
	for _, f := range fields {
		want[f] = true
	}
	want["type"] = true
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("selectFields: not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if !want[key] {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(key)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(val)
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// selectEach applies selectFields to each item of a list.
func selectEach[T any](items []T, fields []string) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(items))
	for i := range items {
		b, err := selectFields(items[i], fields)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
