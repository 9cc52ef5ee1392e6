package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// MaxJSONBody is the largest JSON body a call accepts (decisions.md §19).
const MaxJSONBody = 1 << 20

// decodeJSON reads the request body as one JSON value into v. A non-JSON
// content type is 415, a body over max bytes is 413, and anything that is
// not valid JSON of v's shape is INVALID_REQUEST_BODY naming the field.
// Unknown fields are ignored: real clients send back whole objects.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, max int64) error {
	if err := requireJSON(r); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		return err
	}
	return unmarshalBody(body, v)
}

// requireJSON refuses a body declared as something other than JSON. A
// missing Content-Type is accepted, as some clients send none.
func requireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json") {
		return wnms.Errorf(wnms.UnsupportedMediaType, "the body must be application/json, not %q", ct)
	}
	return nil
}

// unmarshalBody decodes exactly one JSON value from body into v.
func unmarshalBody(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return wnms.Errorf(wnms.InvalidRequestBody, "the request body is empty")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return wnms.Errorf(wnms.InvalidRequestBody, "the body holds more than one JSON value")
	}
	return nil
}

// bodyError turns a JSON decoding error into INVALID_REQUEST_BODY.
func bodyError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return &wnms.Error{Code: wnms.InvalidRequestBody, MoreInfo: field,
			Message: fmt.Sprintf("%s: expected %s, got JSON %s", field, jsonKind(te.Type.Kind().String()), te.Value)}
	case errors.As(err, &se):
		return wnms.Errorf(wnms.InvalidRequestBody, "malformed JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return wnms.Errorf(wnms.InvalidRequestBody, "truncated JSON")
	}
	var e *wnms.Error
	if errors.As(err, &e) {
		return e
	}
	return wnms.Errorf(wnms.InvalidRequestBody, "invalid JSON: %s", err.Error())
}

func jsonKind(k string) string {
	switch k {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

// pathInt reads an integer path parameter.
func pathInt(r *http.Request, name string) (int64, error) {
	v := r.PathValue(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, wnms.ParamError(name, "%s must be an integer, not %q", name, v)
	}
	return n, nil
}

// queryValue returns the last value of a query parameter and whether it was
// given. Quoted values ("JSON") are unquoted, as real clients send them.
func queryValue(r *http.Request, name string) (string, bool) {
	vs, ok := r.URL.Query()[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	v := vs[len(vs)-1]
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return v, true
}

// queryInt reads an optional integer query parameter.
func queryInt(r *http.Request, name string, def int64) (int64, error) {
	v, ok := queryValue(r, name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, wnms.ParamError(name, "%s must be an integer, not %q", name, v)
	}
	return n, nil
}

// queryBool reads an optional boolean query parameter.
func queryBool(r *http.Request, name string, def bool) (bool, error) {
	v, ok := queryValue(r, name)
	if !ok || v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, wnms.ParamError(name, "%s must be true or false, not %q", name, v)
}
