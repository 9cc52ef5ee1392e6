package httpkit

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// QueryValue returns the last value of a query parameter, trimmed of
// spaces and unquoted ("5" becomes 5, as real clients send values), and
// whether the parameter was given at all. A parameter given empty is
// given with the value "": a call decides whether that is missing.
func QueryValue(r *http.Request, name string) (string, bool) {
	vs, ok := r.URL.Query()[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	v := strings.TrimSpace(vs[len(vs)-1])
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return v, true
}

// QueryInt reads an optional integer query parameter; absent or empty is
// def, anything else not an integer is INVALID_PARAMETER.
func QueryInt(r *http.Request, name string, def int64) (int64, error) {
	v, ok := QueryValue(r, name)
	if !ok || v == "" {
		return def, nil
	}
	return ParseInt(name, v)
}

// ParseInt reads the value v of parameter name as an integer
// (INVALID_PARAMETER when it is not one).
func ParseInt(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, wnms.ParamError(name, "%s must be an integer, not %q", name, v)
	}
	return n, nil
}

// QueryBool reads an optional boolean query parameter (true, false, 1, 0,
// in any case); absent or empty is def.
func QueryBool(r *http.Request, name string, def bool) (bool, error) {
	v, ok := QueryValue(r, name)
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

// PathInt reads an integer path parameter.
func PathInt(r *http.Request, name string) (int64, error) {
	return ParseInt(name, r.PathValue(name))
}

// QueryValues returns every value given for a repeatable query parameter,
// each trimmed and unquoted as QueryValue does; empty values are left out.
func QueryValues(r *http.Request, name string) []string {
	var out []string
	for _, v := range r.URL.Query()[name] {
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// sessionNode refuses a nodeid (or nodeId) other than 0 on a call of the
// caller's session with this server: a child would act on this server's
// session with it.
func sessionNode(r *http.Request, pattern string) error {
	for _, name := range []string{"nodeid", "nodeId"} {
		n, err := QueryInt(r, name, 0)
		if err != nil {
			return err
		}
		if n != 0 {
			return wnms.ParamError(name, "%s concerns your session with this server and takes no %s", pattern, name)
		}
	}
	return nil
}

// localNode checks the nodeid parameter (nodeId, as some calls spell it)
// on a server without cluster children: 0 or absent addresses this
// server; any other node is INVALID_PARAMETER, as an unknown child is.
func localNode(r *http.Request) error {
	for _, name := range []string{"nodeid", "nodeId"} {
		n, err := QueryInt(r, name, 0)
		if err != nil {
			return err
		}
		if n != 0 {
			return wnms.ParamError(name, "no cluster child %d: this server has no cluster children", n)
		}
	}
	return nil
}
