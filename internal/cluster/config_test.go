package cluster

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	const good = `{"children": [
  {"childId": 1, "name": "Campus A", "url": "http://10.0.0.5:8080/", "keyId": "k1", "keyValue": "secret-value-1"},
  {"childId": 2, "url": "https://b.example.net", "keyId": "k2", "keyValue": "secret-value-2", "timeoutSeconds": 3}
]}`
	cfg, err := ParseConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Children) != 2 || cfg.Children[0].URL != "http://10.0.0.5:8080" || cfg.Children[1].Timeout().Seconds() != 3 ||
		cfg.Children[0].Timeout() != DefaultTimeout {
		t.Fatalf("parsed %+v", cfg)
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not JSON", "{\"children\": [\n  {\"childId\": 1,,}\n]}", "line 2, column"},
		{"truncated", `{"children": [`, "ends before"},
		{"wrong type", "{\n\"children\": {}}", "line 2"},
		{"unknown field", `{"children": [], "kids": []}`, `unknown field "kids"`},
		{"trailing", `{"children": []} {}`, "something follows"},
		{"duplicate id", `{"children": [{"childId": 1, "url": "http://a:1", "keyId": "k", "keyValue": "v"}, {"childId": 1, "name": "B", "url": "http://b:1", "keyId": "k", "keyValue": "v"}]}`, "children[1], child 1 (B): childId 1 appears twice"},
		{"zero id", `{"children": [{"url": "http://a:1", "keyId": "k", "keyValue": "v"}]}`, "children[0]: childId must be a positive integer"},
		{"ftp url", `{"children": [{"childId": 3, "url": "ftp://a:1", "keyId": "k", "keyValue": "v"}]}`, "children[0], child 3: url must be http(s)"},
		{"url with path", `{"children": [{"childId": 3, "url": "http://a:1/new/webservice", "keyId": "k", "keyValue": "v"}]}`, "url must be"},
		{"url with user", `{"children": [{"childId": 3, "url": "http://u:p@a:1", "keyId": "k", "keyValue": "v"}]}`, "url must be"},
		{"no key", `{"children": [{"childId": 4, "url": "http://a:1", "keyId": "k"}]}`, "children[0], child 4: keyId and keyValue are required"},
		{"timeout", `{"children": [{"childId": 4, "url": "http://a:1", "keyId": "k", "keyValue": "v", "timeoutSeconds": 999}]}`, "timeoutSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret-value") {
				t.Fatalf("the error shows a key value: %v", err)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"children": [{"childId": 1, "url": "http://a:1", "keyId": "k", "keyValue": "v"}]}`))
	f.Add([]byte(`{"children": [{"childId": 1,,}]}`))
	f.Add([]byte(`{"children": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseConfig(b)
		if err != nil {
			return
		}
		seen := map[int64]bool{}
		for _, c := range cfg.Children {
			if c.ChildID <= 0 || seen[c.ChildID] || c.KeyID == "" || c.KeyValue == "" ||
				!(strings.HasPrefix(c.URL, "http://") || strings.HasPrefix(c.URL, "https://")) {
				t.Fatalf("accepted a bad child: %+v", c)
			}
			seen[c.ChildID] = true
		}
	})
}
