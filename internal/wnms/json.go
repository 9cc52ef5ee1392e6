package wnms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeJSON decodes exactly one JSON value from body into v. An empty
// body, malformed JSON, a field of the wrong type or trailing data is
// INVALID_REQUEST_BODY naming the field where it can. Unknown fields are
// ignored: real clients send back whole objects they have read.
func DecodeJSON(body []byte, v any) error {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return Errorf(InvalidRequestBody, "the request body is empty")
	}
	if err := CheckJSONText(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return JSONError(err, "")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(InvalidRequestBody, "the body holds more than one JSON value")
	}
	return nil
}

// DecodeJSONObject is DecodeJSON for a body that must be a JSON object.
func DecodeJSONObject(body []byte, v any) error {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] != '{' {
		return Errorf(InvalidRequestBody, "the body must be a JSON object")
	}
	return DecodeJSON(b, v)
}

// JSONError turns an encoding/json decoding error into
// INVALID_REQUEST_BODY. The field it names is prefixed by prefix (a nested
// object's name) when one is given; an *Error passes through.
func JSONError(err error, prefix string) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		switch {
		case field == "" && prefix == "":
			field = "body"
		case field == "":
			field = prefix
		case prefix != "":
			field = prefix + "." + field
		}
		return &Error{Code: InvalidRequestBody, MoreInfo: field,
			Message: fmt.Sprintf("%s: expected %s, got JSON %s", field, jsonKind(te.Type.Kind()), te.Value)}
	case errors.As(err, &se):
		return Errorf(InvalidRequestBody, "malformed JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return Errorf(InvalidRequestBody, "truncated JSON")
	}
	return Errorf(InvalidRequestBody, "invalid JSON")
}

// jsonKind names a Go kind as JSON speaks of it.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return k.String()
}

// CheckJSONText refuses JSON text that encoding/json would silently repair:
// bytes that are not UTF-8, and \u escapes of lone UTF-16 surrogates, both
// of which it turns into U+FFFD. Stored names must be what the client
// meant, so either is INVALID_REQUEST_BODY.
func CheckJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return Errorf(InvalidRequestBody, "the body is not valid UTF-8")
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(b):
			if b[i+1] != 'u' {
				i++ // an escaped character, perhaps a quote
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				continue // malformed: the decoder reports it
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00: // high: a low must follow
				lo, ok := rune(0), i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u'
				if ok {
					lo, ok = hex4(b, i+8)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return Errorf(InvalidRequestBody, "the body holds a lone UTF-16 surrogate escape at byte %d", i)
				}
				i += 11
			case utf16.IsSurrogate(r):
				return Errorf(InvalidRequestBody, "the body holds a lone UTF-16 surrogate escape at byte %d", i)
			default:
				i += 5
			}
		}
	}
	return nil
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
