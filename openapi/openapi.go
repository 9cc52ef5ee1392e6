// Package openapi holds the OpenAPI 3.1 document of wnms. It is kept as
// fragments, one per area of the interface, merged into one document at
// start; the merged document is what the server serves and the tests check
// every response against.
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed fragments/*.json
var fragments embed.FS

var (
	once   sync.Once
	merged []byte
	mErr   error
)

// Document returns the merged OpenAPI document as JSON.
func Document() ([]byte, error) {
	once.Do(func() { merged, mErr = merge() })
	return merged, mErr
}

func merge() ([]byte, error) {
	names, err := fs.Glob(fragments, "fragments/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	doc := map[string]any{}
	for _, n := range names {
		b, err := fragments.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var frag map[string]any
		if err := json.Unmarshal(b, &frag); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if err := mergeInto(doc, frag, n); err != nil {
			return nil, err
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// mergeInto merges src into dst: objects merge key by key; any other value
// given twice is an error, so two fragments never silently disagree.
func mergeInto(dst, src map[string]any, where string) error {
	for k, v := range src {
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s: %q is defined twice", where, k)
		}
		if err := mergeInto(om, nm, where+"/"+k); err != nil {
			return err
		}
	}
	return nil
}

// SuccessStatuses maps each state-changing operation, as a route pattern
// below its version segment ("PUT /users", "DELETE /templates/{templateId}/CL_CONN_TEST_PROFILE",
// "PUT /analytics/graphs/locationtracking/zones/ap/config"), to the lowest
// 2xx status the document gives it: the status the call answers when its
// change commits.
func SuccessStatuses() (map[string]int, error) {
	b, err := Document()
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for path, item := range doc.Paths {
		route := unversioned(path)
		for method, raw := range item {
			m := strings.ToUpper(method)
			if m != "POST" && m != "PUT" && m != "DELETE" && m != "PATCH" {
				continue
			}
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			best := 0
			for code := range op.Responses {
				if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 && (best == 0 || n < best) {
					best = n
				}
			}
			if best != 0 {
				out[m+" "+route] = best
			}
		}
	}
	return out, nil
}

// unversioned strips a path's version segment (/V5, /api/v1.14).
func unversioned(path string) string {
	if rest, ok := strings.CutPrefix(path, "/api/"); ok {
		if _, after, ok := strings.Cut(rest, "/"); ok && strings.HasPrefix(rest, "v1.") {
			return "/" + after
		}
	}
	if len(path) > 3 && path[1] == 'V' && path[2] >= '1' && path[2] <= '7' && path[3] == '/' {
		return path[3:]
	}
	return path
}
