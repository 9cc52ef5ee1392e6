package wnms_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// A whsec_ secret is the Standard Webhooks key as its decoded bytes (24
// to 64 of them, in standard base64); any other secret is its own bytes.
func TestStandardWebhookKey(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, n)) }
	for _, c := range []struct {
		name, secret string
		key          []byte // nil: refused with VALIDATION_FAILED
	}{
		{"the specification's key", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", []byte{0x31, 0xf2, 0x90, 0xf6, 0xbf, 0x06, 0x29, 0x8a,
			0xab, 0x4f, 0x08, 0xd4, 0x3c, 0x3f, 0x08, 0x2c, 0xf6, 0x48, 0xa3, 0x62, 0xda, 0x2d, 0xa4, 0xb0}},
		{"plain secret", "receiver-shared-secret-0123456789", []byte("receiver-shared-secret-0123456789")},
		{"prefix in capitals is no prefix", "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", []byte("WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")},
		{"24 bytes", "whsec_" + b64(24), bytes.Repeat([]byte{0xa5}, 24)},
		{"64 bytes, padded", "whsec_" + b64(64), bytes.Repeat([]byte{0xa5}, 64)},
		{"23 bytes", "whsec_" + b64(23), nil},
		{"65 bytes", "whsec_" + b64(65), nil},
		{"not base64", "whsec_not base64 at all!", nil},
		{"padding missing", "whsec_" + strings.TrimRight(b64(64), "="), nil},
		{"URL alphabet", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS_", nil},
		{"nothing after the prefix", "whsec_", nil},
	} {
		key, err := wnms.StandardWebhookKey(c.secret)
		if c.key == nil {
			if wnms.ErrorCode(err) != wnms.ValidationFailed {
				t.Errorf("%s: key %x, error %v; want VALIDATION_FAILED", c.name, key, err)
			}
			if err != nil && strings.Contains(err.Error(), c.secret[min(len(c.secret), 6):]) && len(c.secret) > 6 {
				t.Errorf("%s: the error %q shows the secret", c.name, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(key, c.key) {
			t.Errorf("%s: key %x, %v; want %x", c.name, key, err, c.key)
		}
	}
}
