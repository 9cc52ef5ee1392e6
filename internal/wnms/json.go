package wnms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
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
