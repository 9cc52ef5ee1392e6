package wnms

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestCheckJSONText(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"plain", `{"name":"Café ☕"}`, true},
		{"escaped BMP", `{"name":"caf\u00e9"}`, true},
		{"surrogate pair", `{"name":"\ud83d\ude00"}`, true},
		{"surrogate pair, upper case", `{"name":"\uD83D\uDE00"}`, true},
		{"escaped backslash before u", `{"name":"\\ud800"}`, true},
		{"escaped quote then escape", `{"name":"\"\ud83d\ude00"}`, true},
		{"lone high surrogate", `{"name":"\ud800"}`, false},
		{"lone high at the end", `{"name":"x\ud83d"}`, false},
		{"high then a non-surrogate escape", `{"name":"\ud83d\u0041"}`, false},
		{"lone low surrogate", `{"name":"\ude00"}`, false},
		{"two highs", `{"name":"\ud83d\ud83d"}`, false},
		{"invalid UTF-8", "{\"name\":\"\xff\"}", false},
		{"truncated UTF-8", "{\"name\":\"\xe2\x82\"}", false},
		{"surrogate outside a string is left to the decoder", `{"a":1}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSONText([]byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("CheckJSONText(%s) = %v, want ok %v", tc.body, err, tc.ok)
			}
			if err != nil && ErrorCode(err) != InvalidRequestBody {
				t.Errorf("code %s, want %s", ErrorCode(err), InvalidRequestBody)
			}
		})
	}
}

// FuzzCheckJSONText: whatever the input, a body that passes decodes into
// strings exactly as sent (encoding/json replaced nothing with U+FFFD that
// was not there), and the check never panics.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `"\ud83d\ude00"`, `"\ud800"`, `"\\\ud800"`, "\"\xff\"", `"\u"`, `"\ud83d\u"`, `"\uFFFD"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckJSONText(b) != nil {
			return
		}
		var s string
		if json.Unmarshal(b, &s) != nil {
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("%q passed and decoded into invalid UTF-8", b)
		}
		for _, r := range s {
			if r == utf8.RuneError && !containsReplacement(b) {
				t.Fatalf("%q passed but decoding produced U+FFFD", b)
			}
		}
	})
}

// containsReplacement reports whether the JSON text itself spells U+FFFD.
func containsReplacement(b []byte) bool {
	return bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`))
}
