package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

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
