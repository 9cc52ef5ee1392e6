package wnms

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The tree Diff compares is a value as it encodes to JSON and decodes
// back (maps, slices, json.Number, strings, bools, nil). Marshalling and
// decoding a profile or a policy on every audited change is most of what
// its record costs the change, and the change's transaction holds the
// SQLite writer, so treeOf walks Go values directly with reflection and
// builds the same tree, following encoding/json's rules. Whatever it
// does not mirror exactly (a type with its own MarshalJSON or
// MarshalText, embedded structs, the ",string" option, []byte, a number
// type such as json.Number, a string that is not valid UTF-8, a float,
// whose formatting is left to encoding/json) is encoded with
// encoding/json and decoded, that part alone. TestTreeOfIsJSON checks the
// two agree on every audited domain type.

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	jsonNumber    = reflect.TypeFor[json.Number]()
)

// maxTreeDepth bounds treeOf's walk: a value nested deeper (a cycle of
// pointers) is left to encoding/json, which refuses cycles.
const maxTreeDepth = 100

// treeOf is v as generic JSON, ok false when encoding/json would fail on
// it (the caller then does what encoding/json does).
func treeOf(v reflect.Value, depth int) (any, bool) {
	if !v.IsValid() {
		return nil, true
	}
	if depth > maxTreeDepth {
		return jsonTree(v)
	}
	t := v.Type()
	if ownEncoding(t) {
		return jsonTree(v)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, true
		}
		return treeOf(v.Elem(), depth+1)
	case reflect.Struct:
		fields := fieldsOf(t)
		if fields == nil {
			return jsonTree(v)
		}
		out := make(map[string]any, len(fields.list))
		for _, f := range fields.list {
			fv := v.Field(f.index)
			if f.omitEmpty && emptyValue(fv) {
				continue
			}
			x, ok := treeOf(fv, depth+1)
			if !ok {
				return nil, false
			}
			out[f.name] = x
		}
		return out, true
	case reflect.Map:
		if t.Key().Kind() != reflect.String || ownEncoding(t.Key()) {
			return jsonTree(v)
		}
		if v.IsNil() {
			return nil, true
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return jsonTree(v)
			}
			x, ok := treeOf(it.Value(), depth+1)
			if !ok {
				return nil, false
			}
			out[k] = x
		}
		return out, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return jsonTree(v) // base64, or an element type's own encoding
		}
		if v.IsNil() {
			return nil, true
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			x, ok := treeOf(v.Index(i), depth+1)
			if !ok {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	case reflect.String:
		s := v.String()
		if t == jsonNumber || !utf8.ValidString(s) {
			return jsonTree(v)
		}
		return s, true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), true
	}
	return jsonTree(v) // floats, and what encoding/json refuses
}

// ownEncoding: values of t (or pointers to them) encode themselves.
func ownEncoding(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		(t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)))
}

// jsonTree is v encoded by encoding/json and decoded.
func jsonTree(v reflect.Value) (any, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, false
	}
	t, ok := decodeRaw(raw)
	return t, ok
}

// structFields are the fields of a struct type that encode, by their
// JSON names.
type structFields struct{ list []structField }

type structField struct {
	name      string
	index     int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → *structFields (nil: not mirrored)

// fieldsOf is t's encoded fields, nil when t has what treeOf does not
// mirror (embedded fields, the ",string" and ",omitzero" options, two
// fields of one name).
func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if sf.Anonymous {
			f = nil
			break
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTagName(name) {
			name = sf.Name
		}
		if seen[name] || hasOption(opts, "string") || hasOption(opts, "omitzero") {
			f = nil
			break
		}
		seen[name] = true
		f.list = append(f.list, structField{name: name, index: i, omitEmpty: hasOption(opts, "omitempty")})
	}
	fieldCache.Store(t, f)
	return f
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// validTagName is encoding/json's test of a tag's name: letters, digits
// and a few punctuation characters; anything else means the field's own
// name is used.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// emptyValue is encoding/json's omitempty test.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
