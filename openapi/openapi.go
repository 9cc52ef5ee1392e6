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
